// --resume: keep the whole units of an interrupted output file.

package run

import (
	"bytes"
	"fmt"
	"os"

	"github.com/qpkit/qpkit/pkg/perf"
)

// Resumed is what an interrupted file holds.
type Resumed struct {
	Run  *perf.Run
	Done map[Unit]bool
	Kept []byte // the run record and the records of whole units
	// Samples counts the sample records in Kept, which the resumed run's
	// end record adds to its own.
	Samples int64
}

// ReadResume reads an interrupted samples file. A torn last line, a unit
// with fewer samples than the run asked for, and the end record are
// dropped; the caller rewrites the file with Kept and appends.
func ReadResume(path string) (*Resumed, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a line cut by the interruption
	}
	rd := perf.NewReader(bytes.NewReader(data), path)
	res := &Resumed{Done: map[Unit]bool{}}
	type unitRecs struct {
		lines   [][]byte
		cold    int
		warm    int
		load    bool
		samples int64
	}
	units := map[Unit]*unitRecs{}
	var order []Unit
	get := func(u Unit) *unitRecs {
		if units[u] == nil {
			units[u] = &unitRecs{}
			order = append(order, u)
		}
		return units[u]
	}
	var head []byte
	for rd.Scan() {
		line := append(append([]byte(nil), rd.Raw()...), '\n')
		switch rec := rd.Record().(type) {
		case *perf.Run:
			if res.Run != nil {
				return nil, fmt.Errorf("%s:%d: a second run record", path, rd.Line())
			}
			res.Run = rec
			head = line
		case *perf.Sample:
			u := Unit{Path: rec.Path, Query: rec.Query}
			if rec.Concurrency > 1 { // the sweep's; its level 1 writes no samples
				u.Concurrency = rec.Concurrency
			}
			ur := get(u)
			ur.lines = append(ur.lines, line)
			ur.samples++
			if rec.Phase == perf.PhaseCold {
				ur.cold++
			} else {
				ur.warm++
			}
		case *perf.Load:
			ur := get(Unit{Path: rec.Path, Query: rec.Query, Concurrency: rec.Concurrency})
			ur.lines = append(ur.lines, line)
			ur.load = true
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if res.Run == nil {
		return nil, fmt.Errorf("%s: no run record: nothing to resume", path)
	}
	res.Kept = head
	for _, u := range order {
		ur := units[u]
		whole := ur.load
		if u.Concurrency == 0 {
			// Units are written whole; --min-time gives some more than
			// Iterations warm samples.
			whole = ur.cold == 1 && ur.warm >= res.Run.Iterations
		}
		if whole {
			res.Done[u] = true
			res.Samples += ur.samples
			for _, l := range ur.lines {
				res.Kept = append(res.Kept, l...)
			}
		}
	}
	return res, nil
}
