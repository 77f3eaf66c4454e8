package command

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/worker/internal/ladderreport"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// ladderReportSummary is the first paragraph of "vmafx-worker ladder-report --help".
const ladderReportSummary = `ladder-report writes a VmafxLadder's table (given by the operator as JSON in --table)
as ladder.json, ladder.csv and the plot ladder.svg under --output, where the encodes are.`

// ladderReportFlags are the "ladder-report" flags.
type ladderReportFlags struct {
	set                 *cli.Set
	output, name, table string
	c                   ladderReportConfig
}

// ladderReportConfig is a ladder-report run: the request's report and how to report.
type ladderReportConfig struct {
	report         vmafxv1.LadderReportRequest
	store          fetch.StoreOptions
	terminationLog string
	terminationSet bool
	verbosity      int
}

func newLadderReportFlags() *ladderReportFlags {
	f := &ladderReportFlags{set: newFlags("ladder-report", ladderReportSummary)}
	s := f.set
	s.String(&f.output, "output", envName("output"), "", "`URI` prefix to write ladder.json, ladder.csv and ladder.svg under")
	s.String(&f.name, "name", envName("name"), "ladder", "the ladder's `name`, the plot's title")
	s.String(&f.table, "table", envName("table"), "", "the ladder's rungs as a `JSON` array (status.rungs)")
	addStoreFlags(s, &f.c.store)
	addDefaultCredentialsFlag(s, &f.c.store)
	addResultFlags(s, &f.c.terminationLog, &f.c.verbosity)
	return f
}

func (w *worker) ladderReportCommand() *cobra.Command {
	f := newLadderReportFlags()
	return w.command(f.set, "ladder-report", "write a ladder's table and plot", ladderReportSummary,
		[]string{"vmafx-worker ladder-report --output URI --table JSON [flags]"},
		func([]string) int { c, err := f.config(w.env, nil); return w.ladderReport(c, err) },
		func(err error) int { c, err := f.config(w.env, err); return w.ladderReport(c, err) })
}

// config resolves the parsed flags with their env twins, or keeps err, and turns them
// into a request (fromRequest). The config is never nil.
func (f *ladderReportFlags) config(env func(string) string, err error) (*ladderReportConfig, error) {
	rerr := f.set.Resolve(cli.Getenv(env))
	c := f.c
	c.terminationSet = f.set.Given("termination-log")
	switch {
	case err != nil:
		return &c, err
	case rerr != nil:
		return &c, badRequest("%v", rerr)
	case f.output == "":
		return &c, badRequest("--output (or %s) is required", envName("output"))
	}
	req := vmafxv1.NewWorkerRequest()
	req.LadderReport = &vmafxv1.LadderReportRequest{Output: f.output, Name: f.name}
	if err := json.Unmarshal([]byte(f.table), &req.LadderReport.Rungs); err != nil {
		return &c, badRequest("--table is not a JSON array of rungs: %v", err)
	}
	req.Store = requestStore(c.store)
	return &c, c.fromRequest(req)
}

// fromRequest sets the report req asks for in c, and checks it.
func (c *ladderReportConfig) fromRequest(req *vmafxv1.WorkerRequest) error {
	if err := req.Validate(); err != nil {
		return badRequest("%v", err)
	}
	c.report = *req.LadderReport
	c.report.Name = cmp.Or(c.report.Name, "ladder")
	c.store = storeOptions(req.Store, c.store.DefaultCredentials)
	return nil
}

// ladderReport runs the ladder-report run c, or reports err.
func (w *worker) ladderReport(c *ladderReportConfig, err error) int {
	start := time.Now()
	log := newLogger(w.stderr, c.verbosity, false)
	r := &vmafxv1.ReportResult{Version: vmafxv1.ReportResultVersion}
	if err == nil {
		r.Files, err = writeLadderReport(w.ctx, &c.report, c.store)
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
	w.emitResult(log, c.terminationLog, c.terminationSet, r)
	return code
}

func writeLadderReport(ctx context.Context, lr *vmafxv1.LadderReportRequest, opts fetch.StoreOptions) ([]string, error) {
	name, rungs := lr.Name, lr.Rungs
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
		u, err := fetch.ParseURI(string(vmafxv1.JoinOutput(vmafxv1.OutputURI(lr.Output), f.name)))
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
