// Module helm-values-schema-json builds the generator of the chart's values.schema.json
// (losisin/helm-values-schema-json, the Helm plugin `helm schema`, run here as a plain
// program by `make generate`) from the Go module sources, so that nothing downloads a
// binary. It is separate from the main module so that the tool's dependency graph never
// leaks into the project's go.sum.
module github.com/vmafx/vmafx/hack/tools/helm-values-schema-json

go 1.26.0

tool github.com/losisin/helm-values-schema-json/v2

require (
	github.com/fatih/structs v1.1.0 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/providers/file v1.2.0 // indirect
	github.com/knadh/koanf/providers/posflag v1.0.1 // indirect
	github.com/knadh/koanf/providers/structs v1.0.0 // indirect
	github.com/knadh/koanf/v2 v2.3.0 // indirect
	github.com/losisin/helm-values-schema-json/v2 v2.3.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/sys v0.34.0 // indirect
)
