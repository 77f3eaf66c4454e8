package command

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// A job split into chunks (spec.parallelism) runs the score command in three modes, one
// Pod each: --probe counts the frame pairs; --chunk scores one range of them and writes a
// part; --merge-parts joins the parts, in order, into the job's output and pools them as
// one run does. Motion compares a frame with the one before (its SAD) and motion2 takes
// the smaller of a frame's SAD and the next frame's, so a chunk reads one frame before
// its range and one after it (where another chunk borders it; the high-frame-rate
// models' five-frame window and moving average reach four frames back,
// vmaf.Model.ChunkContext), scores them, and drops them: every frame of the range then has the neighbours it has in one run, and its
// scores are bit for bit one run's. The pooled values are summed by the merge over all
// frames in frame order, as one run sums them.

// chunkMode is the split-job step a score command runs; the zero value is a plain score.
type chunkMode struct {
	probe bool
	// chunk is the range to score, of totalFrames; nil without --chunk.
	chunk       *vmafxv1.ChunkRange
	totalFrames int
	chunkPart   string
	mergeParts  int
}

// partFormat is the output format of a chunk's part.
const partFormat = "part"

// partVersion marks the layout of a chunk part; the merge refuses any other.
const partVersion = "vmafx.dev/chunk-part/v1"

// chunkPart is what a chunk writes for the merge: its frames and how they were scored.
type chunkPart struct {
	Version      string
	Provenance   report.Provenance
	ScaledFrom   string
	Interlaced   []string
	Deinterlaced bool
	Part         *vmaf.Part
}

// check checks the split-job settings together, with output.
func (m *chunkMode) check(output string) error {
	modes := 0
	for _, on := range []bool{m.probe, m.chunk != nil, m.mergeParts != 0} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return badRequest("--probe, --chunk and --merge-parts exclude each other")
	}
	if m.mergeParts > 0 && output == "" {
		return badRequest("--merge-parts needs a positive count and --output, beside which the parts are, got %d", m.mergeParts)
	}
	if m.chunk == nil {
		return nil
	}
	if c := m.chunk; m.totalFrames < c.Start+c.Count {
		return badRequest("--chunk %d:%d ends past --total-frames %d", c.Start, c.Count, m.totalFrames)
	}
	if m.chunkPart == "" {
		return badRequest("--chunk needs --chunk-part, where its per-frame scores go")
	}
	return nil
}

// window is the frames a chunk reads: its range, counted from offset (--frames START: the
// chunks split the frames one run would score), with lead frames of context before and
// trail after where another chunk borders it, as many as the model's motion reaches.
func (m chunkMode) window(offset int, model *vmaf.Model) (start, count, lead, trail int) {
	c := m.chunk
	lead, trail = model.ChunkContext(c.Start, c.Count, m.totalFrames)
	return offset + c.Start - lead, c.Count + lead + trail, lead, trail
}

// chunkSkips is how many leading frames each input skips, and the Start, Count and
// FirstIndex of the scoring: the alignment's starts, and for a chunk the frames before its
// window, which each input skips on its own (an encoded one by seeking), so the scoring
// starts at the window's first frame and counts from it.
func (c *scoreConfig) chunkSkips(model *vmaf.Model) (refSkip, distSkip, start, count, first int) {
	if c.align {
		refSkip, distSkip = c.refStart, c.distStart
	}
	if c.chunk == nil {
		return refSkip, distSkip, c.start, c.count, 0
	}
	first, count, _, _ = c.window(c.start, model)
	return refSkip + first, distSkip + first, 0, count, first
}

// trimChunk drops the context frames of a chunk's result; inputs shorter than the probe
// found fail the chunk.
func (s *scorer) trimChunk(res *vmaf.Result, model *vmaf.Model) error {
	_, count, lead, trail := s.cfg.window(s.cfg.start, model)
	if len(res.Frames) != count {
		return fmt.Errorf("%w: chunk %d:%d read %d frames of the %d it needs: the inputs are shorter than the probe counted",
			vmaf.ErrFrameCountMismatch, s.cfg.chunk.Start, s.cfg.chunk.Count, len(res.Frames), count)
	}
	return res.Trim(lead, trail)
}

// writePart writes res as a chunk part.
func (s *scorer) writePart(w io.Writer, res *vmaf.Result) error {
	return gob.NewEncoder(w).Encode(&chunkPart{
		Version: partVersion, Provenance: s.prov, ScaledFrom: s.scaledFrom, Interlaced: s.interlaced,
		Deinterlaced: s.cfg.deinterlace && len(s.interlaced) > 0, Part: res.Part(),
	})
}

// countFrames counts the frame pairs a score of ref and dist (after alignment) would
// score: from the inputs' exact frame counts where both have one, else by reading them
// (for an encoded input, a decode, which is many times faster than scoring).
func (s *scorer) countFrames(exact bool, refFrames, distFrames int, ref, dist vmaf.FrameSource) (int, error) {
	cfg := s.cfg
	var n int
	if exact {
		n = min(refFrames, distFrames)
		if cfg.align {
			n = min(refFrames-cfg.refStart, distFrames-cfg.distStart)
		}
		n -= cfg.start
		if cfg.count > 0 {
			n = min(n, cfg.count)
		}
	} else {
		var rf, df vmaf.Frame
		for cfg.count <= 0 || n < cfg.start+cfg.count {
			errR, errD := ref.ReadFrame(&rf), dist.ReadFrame(&df)
			if errR != nil && !errors.Is(errR, io.EOF) {
				return 0, fmt.Errorf("reference: %w", errR)
			}
			if errD != nil && !errors.Is(errD, io.EOF) {
				return 0, fmt.Errorf("distorted: %w", errD)
			}
			if errR != nil && errD != nil {
				break
			}
			if errR != nil || errD != nil {
				return 0, fmt.Errorf("%w: reference has %d frames, distorted more or fewer (give an alignment to score the frames they share)", vmaf.ErrFrameCountMismatch, n)
			}
			n++
		}
		n -= cfg.start
	}
	if n <= 0 {
		return 0, vmaf.ErrNoFrames
	}
	return n, nil
}

// succeedProbe reports the frame count of a probe.
func (s *scorer) succeedProbe(frames int) int {
	r := &vmafxv1.WorkerResult{
		Version: vmafxv1.ResultVersion, Frames: frames, WallSeconds: time.Since(s.start).Seconds(),
		Backend: s.prov.Backend, Model: s.prov.Model, ModelSHA256: s.prov.ModelSHA256, KernelVersion: vmaf.Version,
		DistortedScaledFrom: s.scaledFrom, Interlaced: s.interlaced, Alignment: s.alignment,
	}
	s.log.Info("Counted", "frames", frames, "wallSeconds", r.WallSeconds)
	s.emit(r)
	return report.ExitOK
}

// merge joins the chunk parts beside the output into one result, writes the output and,
// once it is written, removes the parts. A merge that finds parts missing and the record
// of an earlier merge of the same parts reports that merge's result (see mergeRecord).
func (s *scorer) merge(ctx context.Context) (*vmaf.Result, error) {
	cfg := s.cfg
	http := cfg.http
	http.UserAgent = "vmafx-worker/" + buildVersion()
	store := cfg.store
	store.Limits = http
	stores := fetch.NewStores(store)
	defer stores.Close()
	out, err := openOutput(cfg.output, cfg.outputFormat, stores)
	if err != nil {
		return nil, err
	}
	defer out.abort()
	mux := fetch.NewMux(fetch.NewHTTP(http), stores)
	parts := make([]*vmaf.Part, cfg.mergeParts)
	digests := make([]string, cfg.mergeParts)
	var missing error
	for i := range parts {
		cp, digest, err := readPart(ctx, mux, vmafxv1.ChunkPartURI(cfg.output, i))
		if errors.Is(err, fetch.ErrNotFound) && ctx.Err() == nil {
			if missing == nil {
				missing = fmt.Errorf("chunk %d: %w", i, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
		if i == 0 {
			s.prov, s.scaledFrom, s.interlaced = cp.Provenance, cp.ScaledFrom, cp.Interlaced
		}
		parts[i], digests[i] = cp.Part, digest
	}
	if missing != nil {
		r, err := s.recoverMerge(ctx, mux, digests)
		if err != nil {
			return nil, fmt.Errorf("%w (%w)", missing, err)
		}
		if r == nil {
			return nil, missing
		}
		s.log.Info("An earlier merge of these parts wrote the output and was stopped while it removed them; reporting its result",
			"output", out.name, "score", r.Score, "frames", r.Frames)
		s.finishMerge(ctx, stores, len(parts))
		s.recovered = r
		return nil, nil
	}
	res, err := vmaf.Merge(parts)
	if err != nil {
		return nil, err
	}
	if err := out.commit(ctx, res); err != nil {
		s.outputErr = err
		s.log.Error(err, "Per-frame scores not written; the score is kept", "output", out.name)
		return res, nil
	}
	s.log.Info("Merged chunks", "output", out.name, "chunks", len(parts), "frames", len(res.Frames))
	if err := s.writeMergeRecord(ctx, stores, digests, s.result(res)); err != nil {
		// Without the record, a merge stopped halfway through the removals could not be
		// replaced: keep the parts, a re-run merges them again.
		s.log.Error(err, "Merge record not written; the chunk parts are kept", "record", mergeRecordURI(out.name))
		return res, nil
	}
	s.finishMerge(ctx, stores, len(parts))
	return res, nil
}

// mergeRecordVersion marks the layout of a merge record; a merge ignores any other.
const mergeRecordVersion = "vmafx.dev/chunk-merge/v1"

// mergeRecord is what a merge writes beside the output once the output is written and
// before it removes any part: the result it reports and the SHA-256 of every part it
// merged. A merge Pod killed while it removes the parts (its node lost, say) leaves some
// of them missing, and its replacement could merge nothing; with the record, the
// replacement checks that the parts left are the ones merged and reports the recorded
// result. The record goes last, once every part is removed.
type mergeRecord struct {
	Version string                `json:"version"`
	Parts   []string              `json:"parts"`
	Result  *vmafxv1.WorkerResult `json:"result"`
}

// mergeRecordURI is where the merge of output's parts records its result.
func mergeRecordURI(output string) string { return output + ".chunks-merged" }

func (s *scorer) writeMergeRecord(ctx context.Context, stores *fetch.Stores, digests []string, r *vmafxv1.WorkerResult) error {
	rec, err := openOutput(mergeRecordURI(s.cfg.output), partFormat, stores)
	if err != nil {
		return err
	}
	defer rec.abort()
	rec.part = func(w io.Writer, _ *vmaf.Result) error {
		return json.NewEncoder(w).Encode(&mergeRecord{Version: mergeRecordVersion, Parts: digests, Result: r})
	}
	return rec.commit(ctx, nil)
}

// recoverMerge returns the result of the earlier merge recorded beside the output, when
// there is a record and every part still present (digests, "" where missing) is one it
// merged; nil when there is none, or it is of other parts (an earlier job's). The output
// it wrote must still be there.
func (s *scorer) recoverMerge(ctx context.Context, mux *fetch.Mux, digests []string) (*vmafxv1.WorkerResult, error) {
	data, _, err := readAll(ctx, mux, mergeRecordURI(s.cfg.output))
	if errors.Is(err, fetch.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("merge record: %w", err)
	}
	var rec mergeRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Version != mergeRecordVersion || rec.Result == nil ||
		len(rec.Parts) != len(digests) {
		return nil, nil
	}
	for i, d := range digests {
		if d != "" && d != rec.Parts[i] {
			return nil, nil
		}
	}
	// Opened, not read: the output of a long film is large, and being there is the point.
	u, err := fetch.ParseURI(s.cfg.output)
	if err == nil {
		var obj io.ReadCloser
		if obj, err = mux.Open(ctx, u); err == nil {
			obj.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("a merge of these parts recorded its result, but its output: %w", err)
	}
	return rec.Result, nil
}

// finishMerge removes the parts and then, when none is left, the merge record.
func (s *scorer) finishMerge(ctx context.Context, stores *fetch.Stores, n int) {
	if left := s.removeParts(ctx, stores, n); left > 0 || ctx.Err() != nil {
		return // the record stays with the parts it describes
	}
	if err := removeObject(ctx, stores, mergeRecordURI(s.cfg.output)); err != nil {
		s.log.Error(err, "Merge record not removed; the output is written")
	}
}

// removeParts removes the chunk parts once the output they were merged into is written,
// wherever they are: on the file system or in the output's bucket, with the output's
// credentials, and returns how many are left. A merge that fails before that, or does not
// write the output, keeps them, so that its retry (or a person) can merge them again. A
// part that cannot be removed is logged and left: the score and the output stand.
func (s *scorer) removeParts(ctx context.Context, stores *fetch.Stores, n int) int {
	removed := 0
	for i := range n {
		if ctx.Err() != nil {
			break // stopped (SIGTERM): report the result rather than remove the rest
		}
		if err := removeObject(ctx, stores, vmafxv1.ChunkPartURI(s.cfg.output, i)); err != nil {
			s.log.Error(err, "Chunk part not removed; the output is written", "chunk", i)
			continue
		}
		removed++
		afterPartRemoved(i)
	}
	s.log.Info("Removed chunk parts", "removed", removed, "left", n-removed)
	return n - removed
}

// afterPartRemoved lets a test stop a merge halfway through its removals, as a kill does.
var afterPartRemoved = func(int) {}

// removeObject removes the file or object at uri; one already gone counts as removed.
func removeObject(ctx context.Context, stores *fetch.Stores, uri string) error {
	u, err := fetch.ParseURI(uri)
	switch {
	case err != nil:
	case u.Scheme == "file":
		if err = os.Remove(u.Path); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	default:
		err = stores.Delete(ctx, u)
	}
	return err
}

// readAll reads the whole file or object at uri.
func readAll(ctx context.Context, mux *fetch.Mux, uri string) ([]byte, *url.URL, error) {
	u, err := fetch.ParseURI(uri)
	if err != nil {
		return nil, nil, err
	}
	obj, err := mux.Open(ctx, u)
	if err != nil {
		return nil, u, err
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	return data, u, err
}

// readPart reads the chunk part at uri and returns it with its SHA-256.
func readPart(ctx context.Context, mux *fetch.Mux, uri string) (*chunkPart, string, error) {
	data, u, err := readAll(ctx, mux, uri)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	var cp chunkPart
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&cp); err != nil {
		return nil, "", fmt.Errorf("%w: %s: %w", vmaf.ErrBadPart, fetch.Redact(u), err)
	}
	if cp.Version != partVersion || cp.Part == nil {
		return nil, "", fmt.Errorf("%w: %s is %q, want %q", vmaf.ErrBadPart, fetch.Redact(u), cp.Version, partVersion)
	}
	return &cp, hex.EncodeToString(sum[:]), nil
}
