// Package command is the vmafx-worker command line: Run parses the
// arguments, scores the videos and reports the result, and returns the exit
// code. It takes its environment, output streams and context as arguments,
// so tests run it in-process exactly as main does. The commands are cobra's; their
// flags, each with an environment twin, come from internal/cli, as in every VMAFX binary.
//
// Two forms of "score" share one code path. The Pod form names its inputs
// with --reference and --distorted, prints the WorkerResult as one JSON line
// on stdout and writes it to the termination message. The desk form,
// "vmafx-worker score ref.y4m dist.y4m", prints "VMAF score: 93.123456" like
// libvmaf's tools, and a progress line when stderr is a terminal.
package command
