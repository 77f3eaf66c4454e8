package publish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// Helm's OCI media types (helm.sh/helm/v3/pkg/registry).
const (
	helmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ChartValues are what a release sets in the chart it packages.
type ChartValues struct {
	// Version is the chart's version (SemVer, no leading v), also its OCI tag.
	Version string
	// AppVersion is the release version, every image's default tag.
	AppVersion string
	// ImageRegistry is where the release's images are (values.yaml imageRegistry).
	ImageRegistry string
	// Created stamps the archive's files (the commit's time, for reproducibility).
	Created time.Time
}

var (
	versionLine    = regexp.MustCompile(`(?m)^version: .*$`)
	appVersionLine = regexp.MustCompile(`(?m)^appVersion: .*$`)
	registryLine   = regexp.MustCompile(`(?m)^imageRegistry: .*$`)
)

// Chart packages the chart in dir (as `helm package` does: its .helmignore applies) with
// v set in Chart.yaml and values.yaml, as Helm's OCI artifact. The archive is
// reproducible: files in name order, fixed times and modes.
func Chart(dir string, v ChartValues) (Artifact, error) {
	rules, err := ignore.ParseFile(filepath.Join(dir, ignore.HelmIgnore))
	if err != nil && !os.IsNotExist(err) {
		return Artifact{}, err
	}
	if rules == nil {
		rules = ignore.Empty()
	}
	rules.AddDefaults()
	files := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(filepath.ToSlash(rel), fi) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		return Artifact{}, err
	}
	meta, values := files["Chart.yaml"], files["values.yaml"]
	if meta == nil || values == nil {
		return Artifact{}, fmt.Errorf("%s: no Chart.yaml or values.yaml", dir)
	}
	if !registryLine.Match(values) {
		return Artifact{}, fmt.Errorf("%s/values.yaml has no top-level imageRegistry", dir)
	}
	meta = versionLine.ReplaceAll(meta, []byte("version: "+v.Version))
	meta = appVersionLine.ReplaceAll(meta, []byte(fmt.Sprintf("appVersion: %q", v.AppVersion)))
	files["Chart.yaml"] = meta
	files["values.yaml"] = registryLine.ReplaceAll(values, []byte(fmt.Sprintf("imageRegistry: %q", v.ImageRegistry)))
	var parsed struct {
		Name string `json:"name"`
	}
	if err := yaml.Unmarshal(meta, &parsed); err != nil {
		return Artifact{}, fmt.Errorf("chart metadata %s: %w", filepath.Join(dir, "Chart.yaml"), err)
	}
	config, err := yaml.YAMLToJSON(meta)
	if err != nil {
		return Artifact{}, err
	}
	tgz, err := tarGz(parsed.Name, files, v.Created)
	if err != nil {
		return Artifact{}, err
	}
	created := v.Created.UTC().Format(time.RFC3339)
	return Artifact{
		ConfigMediaType: helmConfigMediaType, Config: config,
		Layers: []Blob{{MediaType: helmChartMediaType, Data: tgz}},
		Annotations: map[string]string{
			"org.opencontainers.image.title": parsed.Name, "org.opencontainers.image.version": v.Version,
			"org.opencontainers.image.created": created,
		},
	}, nil
}

// tarGz archives files under the folder prefix, as `helm package` lays a chart out.
func tarGz(prefix string, files map[string][]byte, mtime time.Time) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf) // the gzip header's time stays zero
	tw := tar.NewWriter(zw)
	for _, n := range names {
		hdr := &tar.Header{Name: prefix + "/" + n, Mode: 0o644, Size: int64(len(files[n])), ModTime: mtime.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
