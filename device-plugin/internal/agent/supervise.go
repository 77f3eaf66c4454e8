package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
)

// kubeletServer is what the restart loop needs from server.Server.
type kubeletServer interface {
	Start(context.Context) error
	Stop() error
	SocketPath() string
	KubeletSocket() string
}

// Restart loop timing. fsnotify reports a re-created kubelet.sock or a removed plugin
// socket at once; the poll is the backstop for a missed event and must stay under the
// 1 s re-registration target. Registration retries start at 100 ms (a restarting
// kubelet creates its socket a moment before it listens) and double up to 10 s.
const (
	pollInterval = 500 * time.Millisecond
	minBackoff   = 100 * time.Millisecond
	maxBackoff   = 10 * time.Second
)

// supervisor keeps a server registered with the kubelet.
type supervisor struct {
	server kubeletServer
	dir    string
}

func newSupervisor(s kubeletServer, dir string) *supervisor {
	return &supervisor{server: s, dir: filepath.Clean(dir)}
}

// fileID identifies a file across re-creation. The change time is part of it because
// a re-created socket can reuse the inode number of the one just removed.
type fileID struct {
	dev, ino uint64
	ctime    int64
}

func identify(path string) fileID {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano()}
}

// run starts the server, and restarts it whenever the kubelet re-creates its socket
// (a kubelet restart) or the plugin's socket disappears (the kubelet cleans its
// directory on start), until ctx ends. While the kubelet is not up, it retries with
// backoff, and at once when the kubelet's socket appears.
func (s *supervisor) run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if err := os.MkdirAll(s.dir, 0o750); err != nil {
		return err
	}
	var events <-chan fsnotify.Event
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Error(err, "fsnotify unavailable, watching the kubelet by polling", "interval", pollInterval)
	} else {
		defer func() { _ = fw.Close() }()
		if err := fw.Add(s.dir); err != nil {
			logger.Error(err, "Cannot watch the device plugin directory, polling", "dir", s.dir)
		}
		events = fw.Events
	}
	kubeletSocket := s.server.KubeletSocket()

	running := false
	var kubelet fileID // the kubelet socket we registered through
	backoff := minBackoff
	retry := time.NewTimer(0)
	defer retry.Stop()
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()
	restart := func(reason string) {
		if running {
			logger.Info("Restarting the device plugin server", "reason", reason)
			if err := s.server.Stop(); err != nil {
				logger.Error(err, "Stopping the device plugin server")
			}
			running = false
		} else {
			logger.V(2).Info("Registering now", "reason", reason)
		}
		backoff = minBackoff
		retry.Reset(0)
	}
	for {
		select {
		case <-ctx.Done():
			return s.server.Stop()
		case <-retry.C:
			if running {
				continue
			}
			// The kubelet socket registered through is the one there before Start:
			// a kubelet that restarts while Start registers (its socket re-created
			// before Start returns) must look new to the event and the poll after.
			// Where there was none before, the kubelet came up during Start, and
			// the socket there now is the one Start reached.
			through := identify(kubeletSocket)
			if err := s.server.Start(ctx); err != nil {
				logger.Info("Cannot register with the kubelet yet, retrying", "err", err, "retryIn", backoff)
				retry.Reset(backoff)
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			if through == (fileID{}) {
				through = identify(kubeletSocket)
			}
			running, kubelet, backoff = true, through, minBackoff
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch {
			case ev.Name == kubeletSocket && ev.Has(fsnotify.Create):
				// An event can arrive after a registration that already used the
				// new socket: only a socket other than ours means a new kubelet.
				if !running || identify(kubeletSocket) != kubelet {
					restart("kubelet socket created")
				}
			case running && ev.Name == s.server.SocketPath() && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)):
				restart("plugin socket removed")
			}
		case <-poll.C:
			if fw != nil && !slices.Contains(fw.WatchList(), filepath.Clean(s.dir)) {
				_ = fw.Add(s.dir) // the directory was re-created
			}
			if !running {
				continue
			}
			if _, err := os.Stat(s.server.SocketPath()); errors.Is(err, os.ErrNotExist) {
				restart("plugin socket removed")
			} else if id := identify(kubeletSocket); id != (fileID{}) && id != kubelet {
				restart("kubelet socket re-created")
			}
		}
	}
}
