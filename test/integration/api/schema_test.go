package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// The API server keeps times to the second.
var stamp = metav1.NewTime(time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC))

func condition(typ string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: 1,
		LastTransitionTime: stamp, Reason: "Tested", Message: "set by the round-trip test"}
}

// TestStatusRoundTrip writes every status field of every kind through the status
// subresource and reads it back. A Go field missing from the CRD schema would be pruned
// by the API server and show up here as a diff.
func TestStatusRoundTrip(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	c := testenv.Client()
	ctx := testenv.Context(t)

	job := validJob(ns, "round-trip")
	jobStatus := vmafxv1.VmafxJobStatus{
		ObservedGeneration: 1, Phase: vmafxv1.JobSucceeded, Score: "93.123456",
		Result: &vmafxv1.JobResult{Mean: "93.123456", HarmonicMean: "93.000001", Min: "90.5", Max: "97.25",
			Frames: 24, FPS: "31.4", Backend: "cpu", Model: "vmaf_v0.6.1@sha256:abc",
			Features: map[string]string{"psnr_y": "34.500000"}, DistortedScaledFrom: "1280x720",
			ConfidenceInterval: &vmafxv1.ScoreInterval{Low: "80.546798", High: "84.756986", Bagging: "82.900000", StdDev: "1.250000"},
			Device:             "NVIDIA H100 80GB HBM3, Vulkan 1.3.280, NVIDIA 570.86",
			JobWorst: vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "88.100000", P5: "90.600000", P50: "93.500000"},
				WorstFrames: []vmafxv1.JobFrame{{Index: 17, VMAF: "90.500000"}},
				Scenes:      &vmafxv1.JobScenes{Count: 2, Worst: &vmafxv1.JobScene{Start: 12, Frames: 12, Mean: "91.000000", Min: "90.500000", P5: "90.600000"}},
				Report:      "s3://results/round-trip.json.report/"},
			Alignment: &vmafxv1.JobAlignment{Auto: true, Offset: -3, ReferenceStart: 3, DistortedStart: 1, Misaligned: true,
				Confidence: "0.93", Measure: "luma-psnr-thumbnail: 41.50 dB at offset -3, 12.25 dB at the starts given (or 0)",
				Rate: "reference 24 fps, distorted 24000/1001 fps: the same pictures retimed by 1000/1001 (NTSC), paired by index"}},
		Results: []vmafxv1.JobRenditionResult{{Distorted: "https://media.example.com/dist.mp4", Phase: vmafxv1.JobSucceeded, Mean: "93.123456",
			HarmonicMean: "93.000001", Min: "90.500000", Max: "97.250000", Frames: 24,
			JobWorst: vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "88.100000", P5: "90.600000", P50: "93.500000"},
				WorstFrames: []vmafxv1.JobFrame{{Index: 17, VMAF: "90.500000"}, {Index: 3, VMAF: "91.000000"}},
				Scenes:      &vmafxv1.JobScenes{Count: 2, Worst: &vmafxv1.JobScene{Start: 12, Frames: 12, Mean: "91.000000", Min: "90.500000", P5: "90.600000"}},
				Report:      "s3://results/dist.json.report/"},
			Features: map[string]string{"psnr_y": "34.500000"}, DistortedScaledFrom: "1280x720",
			Alignment:   &vmafxv1.JobAlignment{Auto: true, Offset: 1, ReferenceStart: 2, DistortedStart: 3, Misaligned: true, Confidence: "0.50", Measure: "m", Rate: "r"},
			OutputError: "s3: access denied", Reason: vmafxv1.ReasonBadInput, Message: "every field set for the round trip"}},
		Node: "node-a", PodName: "round-trip-1", Attempts: 3, FailedAttempts: 1, LostAttempts: 1,
		StartTime: &stamp, CompletionTime: &stamp, Message: "scored 24 frames",
		Chunks: &vmafxv1.JobChunks{Frames: 24, Total: 3, Done: 3, Progress: "3/3", States: "DDD",
			Attempts: []int32{2, 3, 2}, Failed: []int32{1, 2, 1},
			Probe: &vmafxv1.ChunkStep{State: "D", Attempts: 2, Failed: 1}, Merge: &vmafxv1.ChunkStep{State: "D", Attempts: 2, Failed: 1},
			Alignment: &vmafxv1.JobAlignment{Auto: true, Offset: 2, ReferenceStart: 1, DistortedStart: 3, Misaligned: true, Confidence: "0.91",
				Measure: "luma-psnr-thumbnail: 40.00 dB at offset +2, 20.00 dB at the starts given (or 0)", Rate: "reference 30 fps, distorted 30000/1001 fps"}},
		Conditions: []metav1.Condition{condition(vmafxv1.JobComplete)},
	}
	node := validNode(ns, "node-a")
	nodeStatus := vmafxv1.VmafxNodeStatus{
		ObservedGeneration: 1, Healthy: true, LastHeartbeat: &stamp, Jobs: 3, Device: "2x nvidia (10de:2684)",
		Slots:      &vmafxv1.SlotCounts{Total: 8, Healthy: 7, Allocated: 3},
		Conditions: []metav1.Condition{condition(vmafxv1.NodeReady)},
	}
	training := validTraining(ns, "train")
	trainingStatus := vmafxv1.VmafxModelTrainingStatus{
		ObservedGeneration: 1, Phase: vmafxv1.TrainingRunning, Samples: 1234, HeldOutSamples: 246, SkippedJobs: 2,
		ModelVersion: "train-v3",
		LastCheckpoint: &vmafxv1.Checkpoint{Reference: "oci://registry.example:5000/vmafx/models:train-v3",
			Digest: "sha256:" + strings.Repeat("ab", 32), Samples: 1200, Time: &stamp},
		TrainingError: "4.125000", HeldOutError: "3.900000", BaseHeldOutError: "6.250000", Trainer: "vmafx-trainer-train", TrainerRestarts: 3,
		Conditions: []metav1.Condition{condition(vmafxv1.TrainingReady), condition(vmafxv1.TrainingCheckpointPublished)},
	}

	cases := []struct {
		name   string
		obj    client.Object
		status any // pointer to the object's status field
		want   any
		fresh  client.Object
	}{
		{"VmafxJob", job, &job.Status, jobStatus, &vmafxv1.VmafxJob{}},
		{"VmafxNode", node, &node.Status, nodeStatus, &vmafxv1.VmafxNode{}},
		{"VmafxModelTraining", training, &training.Status, trainingStatus, &vmafxv1.VmafxModelTraining{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireAllFieldsSet(t, reflect.ValueOf(tc.want), "status")
			if err := c.Create(ctx, tc.obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			reflect.ValueOf(tc.status).Elem().Set(reflect.ValueOf(tc.want))
			if err := c.Status().Update(ctx, tc.obj); err != nil {
				t.Fatalf("status update: %v", err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), tc.fresh); err != nil {
				t.Fatalf("get: %v", err)
			}
			got := reflect.ValueOf(tc.fresh).Elem().FieldByName("Status").Interface()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status did not survive the API server (-want +got):\n%s", diff)
			}
		})
	}

	// The printer columns, as the server computes them for `kubectl get`.
	columns := []struct {
		resource, name string
		want           map[string]string
	}{
		{"vmafxjobs", "round-trip", map[string]string{"Phase": "Succeeded", "Score": "93.123456", "Node": "node-a", "Chunks": "3/3", "Offset": "-3"}},
		{"vmafxnodes", "node-a", map[string]string{"Vendor": "nvidia", "Healthy": "true", "Jobs": "3", "Device": "2x nvidia (10de:2684)"}},
		{"vmafxmodeltrainings", "train", map[string]string{"Phase": "Running", "Samples": "1234", "ModelVersion": "train-v3"}},
	}
	for _, tc := range columns {
		t.Run("columns/"+tc.resource, func(t *testing.T) {
			table := getTable(t, fmt.Sprintf("/apis/vmafx.dev/v1/namespaces/%s/%s/%s", ns, tc.resource, tc.name))
			var names []string
			got := map[string]string{}
			for i, col := range table.ColumnDefinitions {
				names = append(names, col.Name)
				if _, ok := tc.want[col.Name]; ok {
					got[col.Name] = fmt.Sprint(table.Rows[0].Cells[i])
				}
			}
			wantNames := append([]string{"Name"}, sortedByColumnOrder(tc.resource)...)
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("printer column values (-want +got):\n%s", diff)
			}
		})
	}
}

// sortedByColumnOrder is the column list of the architecture brief for each resource.
func sortedByColumnOrder(resource string) []string {
	return map[string][]string{
		"vmafxjobs":           {"Phase", "Score", "Node", "Chunks", "Offset", "Age"},
		"vmafxnodes":          {"Vendor", "Healthy", "Jobs", "Device", "Age"},
		"vmafxmodeltrainings": {"Phase", "Samples", "ModelVersion", "Age"},
	}[resource]
}

func getTable(t *testing.T, path string) *metav1.Table {
	t.Helper()
	cfg := testenv.Config()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as Table: %s: %s", path, resp.Status, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("GET %s as Table: %d rows, want 1", path, len(table.Rows))
	}
	return &table
}

// requireAllFieldsSet fails when a field of v has its zero value, so that a status field
// added later cannot escape the round trip by being left out of the fixture.
func requireAllFieldsSet(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			t.Errorf("fixture leaves %s unset", path)
			return
		}
		requireAllFieldsSet(t, v.Elem(), path)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() {
			if ts := v.Interface().(metav1.Time); ts.IsZero() {
				t.Errorf("fixture leaves %s unset", path)
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			requireAllFieldsSet(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			t.Errorf("fixture leaves %s empty", path)
		}
		for i := 0; v.Kind() == reflect.Slice && i < v.Len(); i++ {
			requireAllFieldsSet(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		if v.IsZero() {
			t.Errorf("fixture leaves %s at its zero value", path)
		}
	}
}

// TestOpenAPIDocumentsEveryField checks, in the OpenAPI v3 document that `kubectl
// explain` reads, that every spec and status field of every kind has a description.
func TestOpenAPIDocumentsEveryField(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(testenv.Config())
	if err != nil {
		t.Fatal(err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	gv, ok := paths["apis/vmafx.dev/v1"]
	if !ok {
		t.Fatalf("no OpenAPI v3 document for vmafx.dev/v1")
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]schemaNode `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"VmafxJob", "VmafxNode", "VmafxModelTraining", "VmafxComparison", "VmafxLadder"} {
		s, ok := doc.Components.Schemas["dev.vmafx.v1."+kind]
		if !ok {
			t.Errorf("no schema for %s", kind)
			continue
		}
		fields := 0
		for _, top := range []string{"spec", "status"} {
			fields += checkDescribed(t, kind+"."+top, s.Properties[top])
		}
		if fields < 5 {
			t.Errorf("%s: only %d fields found; the walk is broken", kind, fields)
		}
	}
}

type schemaNode struct {
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
	Items       *schemaNode           `json:"items"`
	AllOf       []schemaNode          `json:"allOf"`
	Ref         string                `json:"$ref"`
}

// checkDescribed walks s and reports every property without a description. Embedded
// Kubernetes types (reached through $ref) are documented upstream and not walked.
func checkDescribed(t *testing.T, path string, s schemaNode) int {
	t.Helper()
	if s.Description == "" && s.Ref == "" && len(s.AllOf) == 0 {
		t.Errorf("%s has no description (kubectl explain would show nothing)", path)
	}
	n := 1
	for name, p := range s.Properties {
		n += checkDescribed(t, path+"."+name, p)
	}
	if s.Items != nil && len(s.Items.Properties) > 0 && !strings.HasSuffix(path, ".conditions") {
		for name, p := range s.Items.Properties {
			n += checkDescribed(t, path+"[]."+name, p)
		}
	}
	return n
}
