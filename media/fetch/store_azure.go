package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Upload buffers of Azure outputs, as gocloud.dev's azureblob wrote them: blocks of
// 8 MiB, up to 5 in flight.
const (
	azureBlockSize   = 8 << 20
	azureConcurrency = 5
)

func (s *Stores) openAzure(name string) (bucket, error) {
	account := s.creds[KeyAzureAccount]
	if account == "" {
		return nil, fmt.Errorf("azure:// needs the storage account: credential %s", KeyAzureAccount)
	}
	domain, protocol := s.creds[KeyAzureDomain], s.creds[KeyAzureProtocol]
	if domain == "" {
		domain = "blob.core.windows.net"
	}
	if protocol == "" {
		protocol = "https"
	}
	if protocol != "http" && protocol != "https" {
		return nil, fmt.Errorf("credential %s: want http or https", KeyAzureProtocol)
	}
	service := protocol + "://" + account + "." + domain
	if strings.HasPrefix(domain, "127.0.0.1") || strings.HasPrefix(domain, "localhost") {
		// A local emulator (Azurite) names the account in the path.
		service = protocol + "://" + domain + "/" + account
	}
	containerURL, err := url.JoinPath(service, name)
	if err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{}
	opts.Transport = &http.Client{Transport: s.transport()}
	var client *container.Client
	switch {
	case s.creds[KeyAzureKey] != "":
		cred, err := azblob.NewSharedKeyCredential(account, s.creds[KeyAzureKey])
		if err != nil {
			return nil, fmt.Errorf("credential %s is not a storage account key", KeyAzureKey)
		}
		client, err = container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	case s.creds[KeyAzureSASToken] != "":
		client, err = container.NewClientWithNoCredential(containerURL+"?"+strings.TrimPrefix(s.creds[KeyAzureSASToken], "?"), opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	case !s.opts.DefaultCredentials:
		// Anonymous: a container with public access reads, anything else is refused.
		client, err = container.NewClientWithNoCredential(containerURL, opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	default:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("no Azure credentials: give %s or %s in the credentials, or run with a managed identity: %w", KeyAzureKey, KeyAzureSASToken, err)
		}
		if client, err = container.NewClient(containerURL, cred, opts); err != nil {
			return nil, err
		}
	}
	return &azureBucket{client: client}, nil
}

// azureBucket is an Azure Blob Storage container.
type azureBucket struct {
	client *container.Client
}

func (b *azureBucket) read(ctx context.Context, key string, off int64, version string) (io.ReadCloser, objectInfo, error) {
	opts := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off}}
	if version != "" {
		etag := azcore.ETag(version)
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
	}
	resp, err := b.client.NewBlobClient(key).DownloadStream(ctx, opts)
	if err != nil {
		return nil, objectInfo{}, azureError(err)
	}
	info := objectInfo{}
	if resp.ContentLength != nil {
		info.size = *resp.ContentLength
	}
	if resp.ContentRange != nil {
		if total, ok := rangeTotal(*resp.ContentRange); ok {
			info.size = total
		}
	}
	if resp.ETag != nil {
		info.version = string(*resp.ETag)
	}
	return resp.Body, info, nil
}

func (b *azureBucket) write(ctx context.Context, key, contentType string) (io.WriteCloser, error) {
	bb := b.client.NewBlockBlobClient(key)
	return newPipeUpload(ctx, func(body io.Reader) error {
		_, err := bb.UploadStream(ctx, body, &blockblob.UploadStreamOptions{
			BlockSize: azureBlockSize, Concurrency: azureConcurrency,
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: &contentType},
		})
		return azureError(err)
	}), nil
}

func (b *azureBucket) delete(ctx context.Context, key string) error {
	_, err := b.client.NewBlobClient(key).Delete(ctx, nil)
	return azureError(err)
}

// azureError turns an Azure error response into a *serviceError, with the codes that
// say "not found" and "denied" as gocloud.dev's azureblob read them; other errors stay as
// they are.
func azureError(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		if strings.Contains(err.Error(), "no such host") {
			// An unknown storage account: its host name does not resolve.
			return &serviceError{notFound: true, cause: "no such storage account (its host name does not resolve)", err: err}
		}
		return err
	}
	return &serviceError{
		status:   re.StatusCode,
		notFound: bloberror.HasCode(err, bloberror.BlobNotFound) || re.StatusCode == http.StatusNotFound,
		denied:   bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.AuthorizationFailure),
		cause:    re.ErrorCode + " (HTTP " + strconv.Itoa(re.StatusCode) + ")",
		err:      err,
	}
}
