package command

import (
	"bytes"
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
	store               fetch.StoreOptions
	terminationLog      string
	verbosity           int
}

func newLadderReportFlags() *ladderReportFlags {
	f := &ladderReportFlags{set: newFlags("ladder-report", ladderReportSummary)}
	s := f.set
	s.String(&f.output, "output", envName("output"), "", "`URI` prefix to write ladder.json, ladder.csv and ladder.svg under")
	s.String(&f.name, "name", envName("name"), "ladder", "the ladder's `name`, the plot's title")
	s.String(&f.table, "table", envName("table"), "", "the ladder's rungs as a `JSON` array (status.rungs)")
	addStoreFlags(s, &f.store)
	addResultFlags(s, &f.terminationLog, &f.verbosity)
	return f
}

func (w *worker) ladderReportCommand() *cobra.Command {
	f := newLadderReportFlags()
	return w.command(f.set, "ladder-report", "write a ladder's table and plot", ladderReportSummary,
		[]string{"vmafx-worker ladder-report --output URI --table JSON [flags]"},
		func([]string) int { return w.ladderReport(f, nil) },
		func(err error) int { return w.ladderReport(f, err) })
}

// ladderReport runs the ladder-report command with the parsed flags f, or reports err.
func (w *worker) ladderReport(f *ladderReportFlags, err error) int {
	start := time.Now()
	if rerr := f.set.Resolve(cli.Getenv(w.env)); err == nil && rerr != nil {
		err = badRequest("%v", rerr)
	}
	log := newLogger(w.stderr, f.verbosity, false)
	r := &vmafxv1.ReportResult{Version: vmafxv1.ReportResultVersion}
	if err == nil {
		r.Files, err = writeLadderReport(w.ctx, f.output, f.name, f.table, f.store)
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
	w.emitResult(log, f.terminationLog, f.set.Given("termination-log"), r)
	return code
}

func writeLadderReport(ctx context.Context, output, name, table string, opts fetch.StoreOptions) ([]string, error) {
	if output == "" {
		return nil, badRequest("--output (or %s) is required", envName("output"))
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
