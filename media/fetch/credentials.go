package fetch

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Credential keys: the file names in the credentials directory (the keys of
// the job's Secret), named as the usual environment variables.
const (
	KeyAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	KeyAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	KeyAWSSessionToken    = "AWS_SESSION_TOKEN"
	KeyAWSRegion          = "AWS_REGION"
	KeyAWSEndpointURL     = "AWS_ENDPOINT_URL"
	KeyAWSPathStyle       = "AWS_S3_USE_PATH_STYLE"
	KeyAzureAccount       = "AZURE_STORAGE_ACCOUNT"
	KeyAzureKey           = "AZURE_STORAGE_KEY"
	KeyAzureSASToken      = "AZURE_STORAGE_SAS_TOKEN"
	KeyAzureDomain        = "AZURE_STORAGE_DOMAIN"
	KeyAzureProtocol      = "AZURE_STORAGE_PROTOCOL"
	KeyGCSCredentialsJSON = "GOOGLE_APPLICATION_CREDENTIALS_JSON"
)

// credentialKeys are the keys read; other files in the directory are ignored.
var credentialKeys = []string{
	KeyAWSAccessKeyID, KeyAWSSecretAccessKey, KeyAWSSessionToken, KeyAWSRegion, KeyAWSEndpointURL, KeyAWSPathStyle,
	KeyAzureAccount, KeyAzureKey, KeyAzureSASToken, KeyAzureDomain, KeyAzureProtocol, KeyGCSCredentialsJSON,
}

// secretKeys are the credentials whose values never appear in a message.
var secretKeys = []string{KeyAWSSecretAccessKey, KeyAWSSessionToken, KeyAzureKey, KeyAzureSASToken, KeyGCSCredentialsJSON}

// Credentials are the values read from a credentials directory, by key.
type Credentials map[string]string

// LoadCredentials reads the known keys from dir, one file per key (a mounted
// Secret). Missing keys are absent; an empty dir name gives no credentials.
// Values are trimmed of surrounding white space, except the JSON key file.
// Errors never quote a value.
func LoadCredentials(dir string) (Credentials, error) {
	c := Credentials{}
	if dir == "" {
		return c, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("credentials directory %s: %w", dir, fileCause(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("credentials directory %s: not a directory", dir)
	}
	for _, k := range credentialKeys {
		data, err := os.ReadFile(filepath.Join(dir, k))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("credential %s in %s: %w", k, dir, fileCause(err))
		}
		v := string(data)
		if k != KeyGCSCredentialsJSON {
			v = strings.TrimSpace(v)
		}
		if v != "" {
			c[k] = v
		}
	}
	return c, nil
}

// Keys lists the keys present, sorted, for logs.
func (c Credentials) Keys() []string {
	var ks []string
	for k := range c {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// scrub removes every secret value, and the parts of a SAS token, from s.
// The services' errors are not meant to quote secrets; this makes sure.
func (c Credentials) scrub(s string) string {
	var secrets []string
	for _, k := range secretKeys {
		v := c[k]
		if v == "" {
			continue
		}
		secrets = append(secrets, v)
		if k == KeyAzureSASToken {
			if q, err := url.ParseQuery(strings.TrimPrefix(v, "?")); err == nil {
				for _, vs := range q {
					for _, p := range vs {
						secrets = append(secrets, p, url.QueryEscape(p))
					}
				}
			}
		}
	}
	// Longest first, so that a value containing another is removed whole.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, v := range secrets {
		if len(v) >= 6 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
