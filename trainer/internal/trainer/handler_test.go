package trainer

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	tr, err := New(Config{Namespace: "ns", Name: "run"}, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	tr.metrics.samples.Add(3)
	srv := httptest.NewServer(tr.Handler(reg))
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(body)
	}
	var st vmafxv1.TrainerStatus
	if err := json.Unmarshal([]byte(get(vmafxv1.TrainerStatusPath)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != vmafxv1.TrainerStatusVersion || st.Phase != vmafxv1.TrainingInitializing || st.Reason != vmafxv1.ReasonResuming {
		t.Errorf("status %+v", st)
	}
	if m := get("/metrics"); !strings.Contains(m, "vmafx_trainer_samples_total 3") {
		t.Errorf("metrics lack the sample counter:\n%s", m)
	}
	if get("/healthz") != "ok" {
		t.Error("healthz")
	}
}
