// Module asmgen generates the kernel's vector assembly with avo
// (`make generate`). It is separate from the main module so that avo and its
// dependencies stay out of the project's go.mod; the generated files are
// checked in, so building the worker never needs it.
module github.com/vmafx/vmafx/vmaf/asmgen

go 1.26.0

require github.com/mmcloughlin/avo v0.6.0

require (
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)
