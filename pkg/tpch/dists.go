// Distribution data: the embedded dists.dss file and its parser.

package tpch

import (
	"bufio"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// distsDSS is the distribution file shipped with TPC-H dbgen 2.14.0. It is
// specification data: every word, weight and list order in it shows up in the
// generated tables, so it is embedded verbatim.
//
//go:embed dists.dss
var distsDSS string

// dist is one named weighted list from dists.dss.
type dist struct {
	names []string
	// cum[i] is the cumulative weight of entries 0..i, as dbgen keeps it.
	cum []int64
	// pick maps a draw j in [1, total] to the first index whose cumulative
	// weight is >= j; it replaces dbgen's linear scan with one lookup.
	pick []uint16
}

// total is the sum of all weights, the upper bound of a pick draw.
func (d *dist) total() int64 { return d.cum[len(d.cum)-1] }

func (d *dist) buildPick() {
	t := d.total()
	prev := int64(0)
	for _, c := range d.cum {
		if c < prev {
			// Not a real distribution (the nations list keeps region
			// numbers in its weights); it is never drawn from.
			return
		}
		prev = c
	}
	d.pick = make([]uint16, t+1)
	i := 0
	for j := int64(1); j <= t; j++ {
		for d.cum[i] < j {
			i++
		}
		d.pick[j] = uint16(i)
	}
}

// parseDists reads every BEGIN/END block of a dists.dss file. It follows
// dbgen's reader: text after '#' is ignored, names and keywords are matched
// case-insensitively, and a "count" line gives the expected number of entries.
func parseDists(src string) (map[string]*dist, error) {
	out := make(map[string]*dist)
	var cur *dist
	var curName string
	want := -1
	sc := bufio.NewScanner(strings.NewReader(src))
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line == "" {
			continue
		}
		if cur == nil {
			f := strings.Fields(line)
			if len(f) >= 2 && strings.EqualFold(f[0], "begin") {
				cur = &dist{}
				curName = strings.ToLower(f[1])
				want = -1
			}
			continue
		}
		if len(line) >= 3 && strings.EqualFold(line[:3], "end") {
			if want >= 0 && want != len(cur.names) {
				return nil, fmt.Errorf("dists.dss: distribution %q has %d entries, count says %d", curName, len(cur.names), want)
			}
			if len(cur.names) == 0 {
				return nil, fmt.Errorf("dists.dss: distribution %q is empty", curName)
			}
			cur.buildPick()
			out[curName] = cur
			cur = nil
			continue
		}
		bar := strings.IndexByte(line, '|')
		if bar < 0 {
			continue
		}
		token := line[:bar]
		wtext := strings.TrimSpace(line[bar+1:])
		// dbgen reads the weight with %ld, which stops at the first non-digit.
		end := 0
		for end < len(wtext) && (wtext[end] >= '0' && wtext[end] <= '9' || end == 0 && wtext[end] == '-') {
			end++
		}
		w, err := strconv.ParseInt(wtext[:end], 10, 64)
		if err != nil {
			continue
		}
		if strings.EqualFold(token, "count") {
			want = int(w)
			continue
		}
		var prev int64
		if n := len(cur.cum); n > 0 {
			prev = cur.cum[n-1]
		}
		cur.names = append(cur.names, token)
		cur.cum = append(cur.cum, prev+w)
	}
	if cur != nil {
		return nil, fmt.Errorf("dists.dss: distribution %q has no END", curName)
	}
	return out, nil
}

// distSet holds the distributions the generator uses.
type distSet struct {
	pCntr, colors, pTypes, nations, regions, oPrio, instruct, smode, rflag, mseg        *dist
	nouns, verbs, adjectives, adverbs, auxiliaries, terminators, articles, prepositions *dist
	grammar, np, vp                                                                     *dist
}

var (
	distsOnce sync.Once
	distsVal  *distSet
	distsErr  error
)

// loadDists parses the embedded file once; the result is shared read-only.
func loadDists() (*distSet, error) {
	distsOnce.Do(func() {
		m, err := parseDists(distsDSS)
		if err != nil {
			distsErr = err
			return
		}
		get := func(name string) *dist {
			d := m[name]
			if d == nil && err == nil {
				err = fmt.Errorf("dists.dss: distribution %q is missing", name)
			}
			return d
		}
		s := &distSet{
			pCntr: get("p_cntr"), colors: get("colors"), pTypes: get("p_types"),
			nations: get("nations"), regions: get("regions"), oPrio: get("o_oprio"),
			instruct: get("instruct"), smode: get("smode"), rflag: get("rflag"),
			mseg: get("msegmnt"), nouns: get("nouns"), verbs: get("verbs"),
			adjectives: get("adjectives"), adverbs: get("adverbs"),
			auxiliaries: get("auxillaries"), terminators: get("terminators"),
			articles: get("articles"), prepositions: get("prepositions"),
			grammar: get("grammar"), np: get("np"), vp: get("vp"),
		}
		distsVal, distsErr = s, err
	})
	return distsVal, distsErr
}
