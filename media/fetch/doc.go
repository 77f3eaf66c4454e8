// Package fetch opens the worker's inputs by URI and streams them.
//
// Every scheme sits behind one small interface, Fetcher, and Mux routes a URI
// to the Fetcher of its scheme:
//
//   - file:// URIs and bare paths read from the container's file system (in a
//     worker Pod, the job's volume is mounted read-only at /data);
//   - http:// and https:// stream the response body with a timeout on every
//     wait, a size limit, and retries with exponential backoff for transient
//     failures (connection errors, 5xx, 429), resuming a broken transfer with
//     a Range request when the server allows it;
//   - s3://bucket/key (AWS and S3-compatible servers), gs://bucket/object
//     and azure://container/blob go through Stores, with credentials from
//     files (a mounted Secret), ranged reads resumed at their offset when a
//     connection breaks, and writers for outputs. S3 uses the AWS SDK, Azure
//     the Azure SDK, and GCS its JSON API over net/http (store_gcs.go: Google's
//     client, with gRPC, would triple the worker's binary).
//
// HTTP redirects are followed hop by hop under a RedirectPolicy: by default
// a redirect may not downgrade https to http nor lead to a loopback,
// link-local or private address, checked on the address actually dialled.
//
// Nothing is buffered beyond what the reader asks for: a video of any length
// streams through a few tens of kilobytes. Every failure, from Open or from a
// Read, is an *Error naming the URI with its credentials and query removed,
// so it can be logged and reported as is.
package fetch
