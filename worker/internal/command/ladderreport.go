package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/worker/fetch"
	"github.com/vmafx/vmafx/worker/internal/ladderreport"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// runLadderReport runs the ladder-report command: it writes a VmafxLadder's table (given
// by the operator as JSON in --table) as ladder.json, ladder.csv and the plot ladder.svg
// under --output, where the encodes are.
func runLadderReport(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	start := time.Now()
	fs := flag.NewFlagSet("vmafx-worker ladder-report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("output", "", "`URI` prefix to write ladder.json, ladder.csv and ladder.svg under")
	name := fs.String("name", "ladder", "the ladder's `name`, the plot's title")
	table := fs.String("table", "", "the ladder's rungs as a JSON array (status.rungs)")
	creds := fs.String("credentials-dir", "", "`directory` of the object store's keys")
	s3Endpoint := fs.String("s3-endpoint", "", "S3 endpoint `URL`")
	s3Region := fs.String("s3-region", "", "S3 `region`")
	s3PathStyle := fs.Bool("s3-path-style", false, "address S3 buckets path-style")
	term := fs.String("termination-log", env(envName("termination-log")), "`file` for the result")
	log := newLogger(stderr, 0, false)
	r := &vmafxv1.ReportResult{Version: vmafxv1.ReportResultVersion}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return report.ExitOK
	}
	if err == nil {
		store := fetch.StoreOptions{CredentialsDir: *creds, S3Endpoint: *s3Endpoint, S3Region: *s3Region}
		if *s3PathStyle {
			store.S3PathStyle = s3PathStyle
		}
		r.Files, err = writeLadderReport(ctx, *output, *name, *table, store)
	} else {
		err = badRequest("%v", err)
	}
	code := report.ExitOK
	if err != nil {
		var reason string
		reason, code = report.Classify(err)
		r.Error = &vmafxv1.WorkerError{Reason: reason, Message: oneLine(err.Error(), 1024)}
		log.Error(nil, "Writing the ladder report failed", "reason", reason, "message", r.Error.Message)
	} else {
		log.Info("Wrote the ladder report", "files", r.Files, "wallSeconds", round3(time.Since(start).Seconds()))
	}
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	path, create := defaultTerminationLog, *term != ""
	if create {
		path = *term
	}
	if werr := report.WriteTermination(path, create, line); werr != nil && create {
		log.Error(werr, "Cannot write the termination message", "path", path)
	}
	_, _ = stdout.Write(line)
	return code
}

func writeLadderReport(ctx context.Context, output, name, table string, opts fetch.StoreOptions) ([]string, error) {
	if output == "" {
		return nil, badRequest("--output is required")
	}
	var rungs []vmafxv1.LadderRung
	if err := json.Unmarshal([]byte(table), &rungs); err != nil {
		return nil, badRequest("--table is not a JSON array of rungs: %v", err)
	}
	stores := fetch.NewStores(opts)
	defer stores.Close()
	files := []struct {
		name, contentType string
		render            func(io.Writer) error
	}{
		{"ladder.json", "application/json", func(w io.Writer) error { return ladderreport.WriteJSON(w, name, rungs) }},
		{"ladder.csv", "text/csv", func(w io.Writer) error { return ladderreport.WriteCSV(w, rungs) }},
		{"ladder.svg", "image/svg+xml", func(w io.Writer) error { return ladderreport.WriteSVG(w, name, rungs) }},
	}
	var written []string
	for _, f := range files {
		u, err := fetch.ParseURI(string(vmafxv1.JoinOutput(vmafxv1.OutputURI(output), f.name)))
		if err != nil {
			return nil, badRequest("--output: %v", err)
		}
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp("", "vmafx-report-*")
		if err != nil {
			return nil, err
		}
		_, err = tmp.Write(buf.Bytes())
		tmp.Close()
		if err == nil {
			err = store(ctx, tmp.Name(), u, stores, f.contentType)
		}
		os.Remove(tmp.Name())
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.name, err)
		}
		written = append(written, fetch.Redact(u))
	}
	return written, nil
}
