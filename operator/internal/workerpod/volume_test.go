package workerpod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

func TestCheckVolume(t *testing.T) {
	policy := config.VolumePolicy{HostPaths: []string{"/srv/clips", "/var/lib/vmafx"}, NFSServers: []string{"nas.local"}, CSIDrivers: []string{"s3.csi.example.com"}}
	host := func(p string) *vmafxv1.JobVolume {
		return &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{Path: p}}
	}
	nfs := func(s string) *vmafxv1.JobVolume {
		return &vmafxv1.JobVolume{NFS: &corev1.NFSVolumeSource{Server: s, Path: "/exports"}}
	}
	csi := func(d string) *vmafxv1.JobVolume {
		return &vmafxv1.JobVolume{CSI: &corev1.CSIVolumeSource{Driver: d, VolumeAttributes: map[string]string{"server": "10.0.0.9", "share": "/"}}}
	}
	cases := []struct {
		name    string
		volume  *vmafxv1.JobVolume
		policy  config.VolumePolicy
		allowed bool
	}{
		{"no volume", nil, config.VolumePolicy{}, true},
		{"pvc", &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}, config.VolumePolicy{}, true},
		{"csi, nothing allowed", csi("nfs.csi.k8s.io"), config.VolumePolicy{}, false},
		{"csi, allowed driver", csi("s3.csi.example.com"), policy, true},
		{"csi, other driver", csi("nfs.csi.k8s.io"), policy, false},
		{"csi, no wildcard", csi("nfs.csi.k8s.io"), config.VolumePolicy{CSIDrivers: []string{"*"}}, false},
		{"csi, nfs servers allow any", csi("nfs.csi.k8s.io"), config.VolumePolicy{NFSServers: []string{"*"}}, false},
		{"host path, nothing allowed", host("/srv/clips"), config.VolumePolicy{}, false},
		{"the allowed folder", host("/srv/clips"), policy, true},
		{"below it", host("/srv/clips/2026/a"), policy, true},
		{"a trailing slash", host("/var/lib/vmafx/"), policy, true},
		{"a sibling with the same prefix", host("/srv/clipsecret"), policy, false},
		{"climbing out", host("/srv/clips/../../etc"), policy, false},
		{"the root", host("/"), policy, false},
		{"a relative path", host("srv/clips"), policy, false},
		{"everything allowed", host("/etc"), config.VolumePolicy{HostPaths: []string{"/"}}, true},
		{"nfs, allowed server", nfs("nas.local"), policy, true},
		{"nfs, other server", nfs("10.0.0.9"), policy, false},
		{"nfs, any server", nfs("10.0.0.9"), config.VolumePolicy{NFSServers: []string{"*"}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVolume(tc.volume, tc.policy)
			if (err == nil) != tc.allowed {
				t.Errorf("CheckVolume = %v; want allowed %v", err, tc.allowed)
			}
			if tc.volume != nil && tc.volume.CSI != nil && err != nil &&
				(!strings.Contains(err.Error(), tc.volume.CSI.Driver) || !strings.Contains(err.Error(), config.EnvAllowedCSIDrivers)) {
				t.Errorf("CheckVolume = %v; want the driver and %s named", err, config.EnvAllowedCSIDrivers)
			}
		})
	}
}

func TestVolumesAreAttachedReadOnly(t *testing.T) {
	for name, v := range map[string]*vmafxv1.JobVolume{
		"pvc": {PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}},
		"csi": {CSI: &corev1.CSIVolumeSource{Driver: "s3.csi.example.com"}},
		"nfs": {NFS: &corev1.NFSVolumeSource{Server: "nas", Path: "/x"}},
	} {
		src := ReadOnlySource(v)
		ro := (src.PersistentVolumeClaim != nil && src.PersistentVolumeClaim.ReadOnly) ||
			(src.CSI != nil && src.CSI.ReadOnly != nil && *src.CSI.ReadOnly) || (src.NFS != nil && src.NFS.ReadOnly)
		if !ro {
			t.Errorf("%s: volume source %+v is not read-only", name, src)
		}
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly {
			t.Errorf("%s: the job's own spec was changed", name)
		}
	}
}
