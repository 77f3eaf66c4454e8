package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Any arguments split into the tool's own and a strictly decoded spec, or an error; never
// a panic, and an unknown argument is never dropped silently.
func FuzzArgs(f *testing.F) {
	f.Add(`{"namespace":"a","name":"b","waitSeconds":60,"reference":"s3://b/r.y4m","distorted":"s3://b/d.mp4"}`)
	f.Add(`{"namespace":1}`)
	f.Add(`{"credentials":{"secretRef":{"name":"prod"}},"outputVolume":{"claimName":"x"}}`)
	f.Add(`{"invented":true}`)
	f.Add(`[]`)
	f.Add(`null`)
	f.Add(`{"waitSeconds":1e309}`)
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolScore, Arguments: json.RawMessage(raw)}}
		var ns, name string
		var wait int
		var spec vmafxv1.VmafxJobSpec
		err := args(req, map[string]any{"namespace": &ns, "name": &name, "waitSeconds": &wait}, &spec)
		var noSpec string
		err2 := args(req, map[string]any{"namespace": &noSpec}, nil)
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &m) == nil {
			if _, ok := m["invented"]; ok && (err == nil || err2 == nil) {
				t.Fatalf("args(%s) accepted an unknown argument", raw)
			}
		}
	})
}
