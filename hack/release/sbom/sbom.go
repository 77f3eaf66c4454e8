// Package sbom writes an image's software bill of materials as an SPDX 2.3 JSON document:
// the Go modules compiled into its binary (from the build information the Go linker
// records, debug/buildinfo) and the Debian packages its runtime layer takes files from.
// Every field derives from its inputs, so the same image gives the same document.
package sbom

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/vmafx/vmafx/hack/release/debroot"
)

// MediaType is the SBOM's media type, the artifactType of its OCI referrer.
const MediaType = "application/spdx+json"

// Image says which image the document describes.
type Image struct {
	// Name is the image's repository name (vmafx-worker) and Version its release version.
	Name, Version string
	// OS and Arch are its platform.
	OS, Arch string
	// Binary is the host path of the image's Go binary.
	Binary string
	// Debian are the Debian packages in its runtime layer; none for a static binary.
	Debian []debroot.Package
	// Created is the document's creation time (the commit's, for reproducibility).
	Created time.Time
	// License is the project's SPDX licence expression; empty is NOASSERTION.
	License string
}

// Document is the subset of SPDX 2.3 that the SBOM fills.
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo is when and by what the document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is one SPDX package.
type Package struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo,omitempty"`
	Supplier         string        `json:"supplier,omitempty"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	LicenseConcluded string        `json:"licenseConcluded"`
	LicenseDeclared  string        `json:"licenseDeclared"`
	CopyrightText    string        `json:"copyrightText"`
	ExternalRefs     []ExternalRef `json:"externalRefs,omitempty"`
}

// ExternalRef is a package URL (purl).
type ExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// Relationship links two SPDX elements.
type Relationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// noAssertion is SPDX's "not stated".
const noAssertion = "NOASSERTION"

// module is the project's Go module, the document namespace's root.
const module = "github.com/vmafx/vmafx"

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxID(kind, name string) string {
	return "SPDXRef-" + kind + "-" + unsafeID.ReplaceAllString(name, "-")
}

// New returns the SBOM of img, reading the Go build information from its binary.
func New(img Image) (*Document, error) {
	bi, err := buildinfo.ReadFile(img.Binary)
	if err != nil {
		return nil, fmt.Errorf("go build information of %s: %w", img.Binary, err)
	}
	plat := img.OS + "/" + img.Arch
	license := img.License
	if license == "" {
		license = noAssertion
	}
	root := Package{
		Name: img.Name, SPDXID: spdxID("Image", img.Name), VersionInfo: img.Version,
		Supplier: "Organization: VMAFX", DownloadLocation: noAssertion,
		LicenseConcluded: noAssertion, LicenseDeclared: license, CopyrightText: noAssertion,
		ExternalRefs: []ExternalRef{purl("pkg:oci/" + img.Name + "@" + url.PathEscape(img.Version) + "?arch=" + img.Arch)},
	}
	doc := &Document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              img.Name + "-" + img.Version + "-" + img.OS + "-" + img.Arch,
		DocumentNamespace: "https://" + module + "/sbom/" + img.Name + "/" + url.PathEscape(img.Version) + "/" + plat,
		CreationInfo:      CreationInfo{Created: img.Created.UTC().Format(time.RFC3339), Creators: []string{"Tool: vmafx-release", "Organization: VMAFX"}},
		Packages:          []Package{root},
		Relationships:     []Relationship{{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID}},
	}
	add := func(p Package) {
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, Relationship{root.SPDXID, "CONTAINS", p.SPDXID})
	}
	// The main module is built from the tagged source: -trimpath reports it as (devel).
	add(goPackage(bi.Main.Path, img.Version, license))
	add(Package{
		Name: "golang", SPDXID: spdxID("Go", "stdlib"), VersionInfo: bi.GoVersion, DownloadLocation: "https://go.dev/dl/",
		LicenseConcluded: noAssertion, LicenseDeclared: "BSD-3-Clause", CopyrightText: noAssertion,
		ExternalRefs: []ExternalRef{purl("pkg:golang/stdlib@" + bi.GoVersion)},
	})
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		add(goPackage(d.Path, d.Version, noAssertion))
	}
	for _, p := range img.Debian {
		add(Package{
			Name: p.Name, SPDXID: spdxID("Debian", p.Name), VersionInfo: p.Version, Supplier: "Organization: Debian",
			DownloadLocation: noAssertion, LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
			ExternalRefs: []ExternalRef{purl("pkg:deb/debian/" + p.Name + "@" + url.PathEscape(p.Version) + "?arch=" + p.Architecture + "&distro=debian-12")},
		})
	}
	return doc, nil
}

func goPackage(path, version, declared string) Package {
	return Package{
		Name: path, SPDXID: spdxID("Go", path), VersionInfo: version, DownloadLocation: "https://proxy.golang.org/" + path,
		LicenseConcluded: noAssertion, LicenseDeclared: declared, CopyrightText: noAssertion,
		ExternalRefs: []ExternalRef{purl("pkg:golang/" + path + "@" + version)},
	}
}

func purl(locator string) ExternalRef {
	return ExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: locator}
}

// JSON is the document's encoding.
func (d *Document) JSON() ([]byte, error) { return json.MarshalIndent(d, "", "  ") }
