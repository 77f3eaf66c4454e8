package fetch

import (
	"context"
	"github.com/vmafx/vmafx/internal/testutil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCredentials(t *testing.T) {
	dir := testutil.CredentialsDir(t, map[string]string{
		KeyAWSAccessKeyID:     "AKID\n",
		KeyAWSSecretAccessKey: "  s3cr3t-value  \n",
		KeyGCSCredentialsJSON: "{\"type\": \"service_account\"}\n",
		"UNRELATED":           "ignored",
		KeyAWSRegion:          "\n",
	})
	got, err := LoadCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{KeyAWSAccessKeyID: "AKID", KeyAWSSecretAccessKey: "s3cr3t-value", KeyGCSCredentialsJSON: "{\"type\": \"service_account\"}\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	if _, err := LoadCredentials(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing directory: %v", err)
	}
	if c, err := LoadCredentials(""); err != nil || len(c) != 0 {
		t.Errorf("no directory: %v, %v", c, err)
	}
}

func TestScrub(t *testing.T) {
	c := Credentials{
		KeyAWSAccessKeyID:     "AKIDPUBLIC",
		KeyAWSSecretAccessKey: "topsecretkey",
		KeyAzureSASToken:      "?sv=2022-11-02&sp=r&sig=abc%2Fdef123456",
	}
	msg := "signature topsecretkey for AKIDPUBLIC, url ...&sig=abc%2Fdef123456 (abc/def123456)"
	got := c.scrub(msg)
	for _, secret := range []string{"topsecretkey", "abc%2Fdef123456", "abc/def123456"} {
		if strings.Contains(got, secret) {
			t.Errorf("scrub(%q) = %q keeps %q", msg, got, secret)
		}
	}
	if !strings.Contains(got, "AKIDPUBLIC") {
		t.Errorf("scrub removed the access key ID, which is not a secret: %q", got)
	}
}

func TestS3Config(t *testing.T) {
	yes, no := true, false
	secret := map[string]string{
		KeyAWSAccessKeyID: "AKID", KeyAWSSecretAccessKey: "secret", KeyAWSRegion: "eu-west-3",
		KeyAWSEndpointURL: "http://minio.storage:9000", KeyAWSPathStyle: "true",
	}
	tests := []struct {
		name    string
		keys    map[string]string
		opts    StoreOptions
		want    S3Config
		wantErr string
	}{
		{name: "from the secret", keys: secret, want: S3Config{Region: "eu-west-3", Endpoint: "http://minio.storage:9000", PathStyle: true, Static: true}},
		{name: "flags override", keys: secret, opts: StoreOptions{S3Endpoint: "https://s3.example", S3Region: "us-west-2", S3PathStyle: &no},
			want: S3Config{Region: "us-west-2", Endpoint: "https://s3.example", PathStyle: false, Static: true}},
		{name: "no secret", opts: StoreOptions{S3PathStyle: &yes}, want: S3Config{PathStyle: true}},
		{name: "key ID without secret", keys: map[string]string{KeyAWSAccessKeyID: "AKID"}, wantErr: "go together"},
		{name: "bad path style", keys: map[string]string{KeyAWSPathStyle: "sometimes"}, wantErr: "want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.CredentialsDir = testutil.CredentialsDir(t, tc.keys)
			s := NewStores(tc.opts)
			var err error
			if s.creds, err = LoadCredentials(tc.opts.CredentialsDir); err != nil {
				t.Fatal(err)
			}
			got, err := s.s3Config()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// The GCS and Azure configurations fail clearly, without quoting the secret,
// before any connection (no server of theirs runs here), for reads and removals alike.
func TestStoreConfigurationErrors(t *testing.T) {
	tests := []struct {
		uri, want, secret string
		keys              map[string]string
	}{
		{uri: "gs://bucket/a.mp4", keys: map[string]string{KeyGCSCredentialsJSON: `{"type": "service_account", "private_key": "PRIVATEKEYMATERIAL"`},
			want: "is not a Google service account key file", secret: "PRIVATEKEYMATERIAL"},
		{uri: "azure://container/a.mp4", keys: map[string]string{KeyAzureKey: "c2VjcmV0"}, want: "needs the storage account: credential AZURE_STORAGE_ACCOUNT", secret: "c2VjcmV0"},
		{uri: "azure://container/a.mp4", keys: map[string]string{KeyAzureAccount: "acct", KeyAzureKey: "not base64!"}, want: "is not a storage account key", secret: "not base64!"},
		{uri: "s3://bucket", keys: nil, want: "want s3://BUCKET/KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			s := NewStores(StoreOptions{CredentialsDir: testutil.CredentialsDir(t, tc.keys)})
			defer s.Close()
			u, err := url.Parse(tc.uri)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Open(context.Background(), u)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.secret != "" && strings.Contains(err.Error(), tc.secret)) {
				t.Fatalf("err = %v, want %q without the secret", err, tc.want)
			}
			// The merge removes chunk parts through the same configuration.
			err = s.Delete(context.Background(), u)
			if err == nil || !strings.HasPrefix(err.Error(), "delete ") || !strings.Contains(err.Error(), tc.want) || (tc.secret != "" && strings.Contains(err.Error(), tc.secret)) {
				t.Fatalf("Delete: err = %v, want %q without the secret", err, tc.want)
			}
		})
	}
}
