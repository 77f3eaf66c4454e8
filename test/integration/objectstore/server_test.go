package objectstore_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// The root credentials the server is started with.
const (
	accessKey = "VMAFXTESTACCESS"
	secretKey = "vmafx-test-secret-key-do-not-log"
)

// server is a running versitygw.
type server struct {
	cmd  *exec.Cmd
	addr string // 127.0.0.1:port
	log  *bytes.Buffer
	done chan struct{}
}

// startServer runs versitygw on a free port of 127.0.0.1 over the directory root and
// waits until it answers its health check.
func startServer(bin, root string) (*server, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	var lastErr error
	// A free port can be taken between choosing it and the server binding it: try again.
	for range 3 {
		addr, err := testutil.FreeAddr()
		if err != nil {
			return nil, err
		}
		s := &server{addr: addr, log: &bytes.Buffer{}, done: make(chan struct{})}
		s.cmd = exec.Command(bin, "--port", addr, "--health", "/healthz", "posix", root)
		s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+accessKey, "ROOT_SECRET_ACCESS_KEY="+secretKey)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = s.cmd.Wait(); close(s.done) }()
		if lastErr = s.waitHealthy(30 * time.Second); lastErr == nil {
			return s, nil
		}
		s.stop()
	}
	return nil, lastErr
}

// waitHealthy polls /healthz until it answers 200, the process exits, or the time is up.
func (s *server) waitHealthy(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	return testutil.Wait(context.Background(), timeout, func(context.Context) error {
		select {
		case <-s.done:
			return fmt.Errorf("versitygw exited: %s", s.log.String())
		default:
		}
		resp, err := client.Get("http://" + s.addr + "/healthz")
		if err != nil {
			return fmt.Errorf("versitygw on %s: %w: %s", s.addr, err, s.log.String())
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("versitygw on %s answers %d: %s", s.addr, resp.StatusCode, s.log.String())
		}
		return nil
	})
}

// stop ends the server by its PID: SIGTERM, then SIGKILL if it lingers.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

func (s *server) endpoint() string { return "http://" + s.addr }

// client is an S3 client of the server with the root credentials, for the tests' own
// setup (buckets, uploads, checks), independent of the code under test.
func (s *server) client() *awss3.Client {
	return awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.endpoint()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
	})
}

var bucketSeq atomic.Int64

// bucket creates a fresh bucket for a test.
func (s *server) bucket(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), bucketSeq.Add(1))
	if _, err := s.client().CreateBucket(context.Background(), &awss3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return name
}

// put uploads data as bucket/key.
func (s *server) put(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	_, err := s.client().PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data),
	})
	if err != nil {
		t.Fatalf("uploading %s/%s: %v", bucket, key, err)
	}
}

// get downloads bucket/key.
func (s *server) get(t *testing.T, bucket, key string) []byte {
	t.Helper()
	out, err := s.client().GetObject(context.Background(), &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("downloading %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cutProxy forwards TCP connections to target and cuts the first connection that has
// carried more than cutAfter bytes from the server: a connection lost mid-transfer.
type cutProxy struct {
	ln       net.Listener
	target   string
	cutAfter int64
	cut      atomic.Bool
	conns    atomic.Int64
	wg       sync.WaitGroup
}

func startCutProxy(t *testing.T, target string, cutAfter int64) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, cutAfter: cutAfter}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.wg.Add(1)
			go p.forward(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *cutProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) forward(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	var n int64
	buf := make([]byte, 16<<10)
	for {
		k, err := up.Read(buf)
		if k > 0 {
			if _, werr := c.Write(buf[:k]); werr != nil {
				return
			}
			n += int64(k)
			if n > p.cutAfter && p.cut.CompareAndSwap(false, true) {
				// Reset, not a clean close: the client sees a broken body.
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				return
			}
		}
		if err != nil {
			return
		}
	}
}
