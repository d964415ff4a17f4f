// Calendar helpers: dbgen's date strings and its "current date" cut-off.

package tpch

import "time"

const (
	// totDate is the number of days from 1992-01-01 that dates may take.
	totDate = 2557
	// currentDate is 1995-06-17 as a day index from 1992-01-01: line items
	// shipped or received by then are "F"inished or returned (dbgen's CURRENTDATE).
	currentDate = 1263
	// Order dates leave room for the longest ship plus receipt delay.
	orderDateMax = totDate - (121 + 30) - 1
)

// dateStrings[i] is "YYYY-MM-DD" for 1992-01-01 plus i days.
var dateStrings = func() [totDate + 1][10]byte {
	var out [totDate + 1][10]byte
	start := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		copy(out[i][:], start.AddDate(0, 0, i).Format("2006-01-02"))
	}
	return out
}()
