package engine

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZFilter(t *testing.T) {
	path := os.Getenv("ZZ_DB")
	if path == "" {
		t.Skip()
	}
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	best := time.Hour
	for i := 0; i < 15; i++ {
		t0 := time.Now()
		rows, err := db.Scan(context.Background(), ScanRequest{Type: "T", ReuseBatches: true, Where: &Where{Cond: &Cond{Property: "x0", Op: ">", Value: 0.99}}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for b, ok := rows.Next(); ok; b, ok = rows.Next() {
			n += b.Rows.Rows()
		}
		rows.Close()
		best = min(best, time.Since(t0))
	}
	t.Log("filter best", best)
	lo, hi := int64(45000), int64(55000)
	aggs := []Agg{{"x0", "count"}, {"x0", "sum"}, {"x0", "min"}, {"x0", "max"}}
	best = time.Hour
	for i := 0; i < 40; i++ {
		t0 := time.Now()
		if _, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "T", Aggs: aggs, Start: &lo, End: &hi}); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	t.Log("range agg best", best)
}
