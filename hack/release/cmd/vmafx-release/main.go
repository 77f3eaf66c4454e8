// Command vmafx-release builds the project's images for linux/amd64 and linux/arm64 as
// multi-architecture OCI indexes with SBOMs and pushes them and the Helm chart to an OCI
// registry (`make push`, `make release`; docs/install.md, "Publish your own build").
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	release "github.com/vmafx/vmafx/hack/release"
	"github.com/vmafx/vmafx/hack/release/project"
)

func main() {
	var (
		o       release.Options
		ver     string
		arches  string
		devOnly bool
	)
	home, _ := os.UserHomeDir()
	flag.StringVar(&o.Registry, "registry", os.Getenv("REGISTRY"), "registry host and path to push to, e.g. registry.example.com/vmafx (env REGISTRY); empty: build only")
	flag.StringVar(&ver, "version", os.Getenv("VERSION"), "release version, a semantic version such as v1.2.3 (env VERSION); empty with -dev: git describe")
	flag.BoolVar(&devOnly, "dev", false, "a development build: the version defaults to git describe and need not be semantic")
	flag.StringVar(&arches, "arches", "amd64,arm64", "Linux architectures, comma-separated")
	only := flag.String("images", "", "build only these images (comma-separated names, e.g. vmafx-worker); default: all")
	flag.BoolVar(&o.PlainHTTP, "plain-http", os.Getenv("REGISTRY_PLAIN_HTTP") == "true", "talk to the registry over plain HTTP (env REGISTRY_PLAIN_HTTP=true)")
	flag.StringVar(&o.Repo, "repo", ".", "repository root")
	flag.StringVar(&o.Cache, "cache", filepath.Join(home, ".cache", "vmafx"), "cache folder (Debian packages under debian/<arch>)")
	flag.StringVar(&o.WorkDir, "out", "_output/release", "folder for the built binaries")
	flag.StringVar(&o.License, "license", project.License, "SPDX licence expression of the images' annotations and SBOMs")
	flag.Parse()
	o.Log = os.Stdout
	o.Arches = strings.Split(arches, ",")
	for _, n := range strings.Split(*only, ",") {
		found := n == ""
		for _, img := range project.Images() {
			if img.Name == n {
				o.Images, found = append(o.Images, img), true
			}
		}
		if !found {
			fmt.Fprintf(os.Stderr, "vmafx-release: no image %q\n", n)
			os.Exit(2)
		}
	}
	if !devOnly {
		if err := release.ValidVersion(ver); err != nil {
			fmt.Fprintf(os.Stderr, "vmafx-release: %v (make release VERSION=v1.2.3; make push for a development build)\n", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, ver); err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-release: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o release.Options, ver string) error {
	var err error
	if o.Stamp, err = project.GitStamp(ctx, o.Repo, ver); err != nil {
		return err
	}
	built, err := release.Build(ctx, o)
	if err != nil {
		return err
	}
	if o.Registry == "" {
		fmt.Println("built; no -registry given, nothing pushed")
		return nil
	}
	chart, err := release.Push(ctx, o, built)
	if err != nil {
		return err
	}
	fmt.Printf("install with: helm install vmafx %s --version %s -n vmafx-system --create-namespace\n", chart, release.ChartVersion(o.Stamp.Version))
	return nil
}
