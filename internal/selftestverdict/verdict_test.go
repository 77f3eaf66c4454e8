package selftestverdict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := Read(dir); ok || err != nil {
		t.Fatalf("Read of an empty directory: ok %v, err %v; want none", ok, err)
	}
	want := Verdict{Result: Fail, Device: "GPU", Driver: "d 1.0", API: "1.3.0", Message: "frame 2 integer_vif_scale1 differs"}
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Read(dir)
	if !ok || err != nil || got != want {
		t.Fatalf("Read = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the directory, want only %s", len(entries), FileName)
	}
}

func TestReadRefusesOtherFiles(t *testing.T) {
	for name, content := range map[string]string{
		"not json":       "hello",
		"unknown result": `{"result":"maybe"}`,
		"too large":      `{"result":"pass","message":"` + strings.Repeat("x", maxSize) + `"}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := Read(dir); ok || err == nil || !strings.Contains(err.Error(), FileName) {
			t.Errorf("%s: ok %v, err %v; want an error naming the file", name, ok, err)
		}
	}
}
