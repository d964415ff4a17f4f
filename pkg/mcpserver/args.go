// Tool arguments read strictly: a value of the wrong type is the caller's
// error (an isError result), not silently the default, and numbers keep
// their exact digits (an id above 2^53 must not bind as its neighbour).

package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// arguments returns req's arguments with numbers as json.Number, decoded
// from the request's own bytes when mcp-go kept them.
func arguments(req mcp.CallToolRequest) map[string]any {
	if raw := req.Params.RawArguments; len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			return m
		}
	}
	return req.GetArguments()
}

// optString returns the string argument key; absent or null: ok false.
func optString(args map[string]any, key string) (s string, ok bool, err error) {
	switch v := args[key].(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	default:
		return "", false, fmt.Errorf("%s must be a string", key)
	}
}

// optBool returns the boolean argument key; absent or null: false.
func optBool(args map[string]any, key string) (bool, error) {
	switch v := args[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s must be true or false", key)
	}
}

// optInt returns the whole-number argument key; absent or null: ok false.
func optInt(args map[string]any, key string) (n int, ok bool, err error) {
	bad := fmt.Errorf("%s must be a whole number", key)
	switch v := args[key].(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		i, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			f, ferr := v.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
				return 0, false, bad
			}
			i = int64(f)
		}
		return int(max(min(i, math.MaxInt32), math.MinInt32)), true, nil
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return 0, false, bad
		}
		return int(max(min(v, math.MaxInt32), math.MinInt32)), true, nil
	default:
		return 0, false, bad
	}
}
