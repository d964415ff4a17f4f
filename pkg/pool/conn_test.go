// Conn bookkeeping without a server: ParameterStatus values and their key.

package pool

import "testing"

// SetParam replaces Params, so that a map read from it earlier (a
// session's view of what its client was told) keeps its values.
func TestSetParamKeepsSnapshots(t *testing.T) {
	c := &Conn{Params: map[string]string{"TimeZone": "UTC", "application_name": "a"}}
	snap, key := c.Params, c.ParamsKey()
	c.SetParam("application_name", "a")
	if c.ParamsKey() != key {
		t.Error("setting the same value changed ParamsKey")
	}
	c.SetParam("application_name", "b")
	if snap["application_name"] != "a" || c.Params["application_name"] != "b" || c.Params["TimeZone"] != "UTC" {
		t.Errorf("snapshot %v, Params %v", snap, c.Params)
	}
	if c.ParamsKey() == key {
		t.Error("ParamsKey did not change with the value")
	}
	c.SetParam("new_one", "x")
	if _, ok := snap["new_one"]; ok || c.Params["new_one"] != "x" {
		t.Errorf("snapshot %v, Params %v", snap, c.Params)
	}
}
