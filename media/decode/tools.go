package decode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Environment variables naming the programs; without them, PATH is searched.
const (
	EnvFFmpeg  = "VMAFX_FFMPEG"
	EnvFFprobe = "VMAFX_FFPROBE"
)

// Sentinel causes. Test them with errors.Is.
var (
	// ErrNoFFmpeg reports that ffmpeg or ffprobe cannot be found, so encoded
	// inputs cannot be read (raw YUV and Y4M need neither).
	ErrNoFFmpeg = errors.New("encoded inputs need ffmpeg and ffprobe")
	// ErrUndecodable reports an input that ffmpeg or ffprobe refused: not a
	// video container, a truncated or corrupt file, no video stream, a codec
	// this ffmpeg cannot decode.
	ErrUndecodable = errors.New("cannot decode")
)

// Tools are the ffmpeg and ffprobe programs.
type Tools struct {
	FFmpeg, FFprobe string
}

// Find locates ffmpeg and ffprobe: at VMAFX_FFMPEG and VMAFX_FFPROBE when
// set, else ffprobe beside a VMAFX_FFMPEG, else on PATH. env looks up
// environment variables. The error wraps ErrNoFFmpeg and says where it looked.
func Find(env func(string) string) (*Tools, error) {
	ffmpeg, err := find(env, EnvFFmpeg, "ffmpeg", "")
	if err != nil {
		return nil, err
	}
	ffprobe, err := find(env, EnvFFprobe, "ffprobe", filepath.Join(filepath.Dir(ffmpeg), "ffprobe"))
	if err != nil {
		return nil, err
	}
	return &Tools{FFmpeg: ffmpeg, FFprobe: ffprobe}, nil
}

// find returns the program named by the variable envName, else beside (when
// it is executable), else name on PATH.
func find(env func(string) string, envName, name, beside string) (string, error) {
	if p := env(envName); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %w", ErrNoFFmpeg, envName, p, err)
		}
		return p, nil
	}
	if beside != "" && executable(beside) == nil {
		return beside, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not on PATH and %s is not set (the worker image ships them; at a desk, install ffmpeg)", ErrNoFFmpeg, name, envName)
	}
	return p, nil
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
