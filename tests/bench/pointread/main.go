// Command pointread times one-device scans of a database in Go, as a
// long-running reader makes them: rounds of reads of random devices of a
// type, each round's p50, p90 and p99. It separates the engine's part of
// a point read from what Python adds, and shows how a process's reads
// change as it reads more of the files (a page is checked against its
// CRC once a process, then read as its rows' values alone).
//
//	go run ./tests/bench/pointread -db PATH [-type M] [-reads 20000] [-rounds 3] [-warm]
//
// It opens the database read-only; `python tests/bench/bench_devices.py
// --dir DIR` leaves its million devices in DIR/arcadego. -warm reads every
// file of the database once first, so that the reads find it in the page
// cache: on a machine that pages out idle page cache (the kernel's DAMON
// reclaim), a database written minutes before is partly back on disk.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/arcadego/arcadego/core/engine"
)

func main() {
	path := flag.String("db", "", "database directory (required)")
	typ := flag.String("type", "M", "type to read")
	reads := flag.Int("reads", 20000, "reads a round")
	rounds := flag.Int("rounds", 3, "rounds")
	seed := flag.Uint64("seed", 1, "random seed")
	warm := flag.Bool("warm", false, "read every file of the database once before the reads")
	flag.Parse()
	if *path == "" || *reads <= 0 || *rounds <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *warm {
		if err := readAll(*path); err != nil {
			fmt.Fprintln(os.Stderr, "pointread:", err)
			os.Exit(1)
		}
	}
	if err := run(*path, *typ, *reads, *rounds, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "pointread:", err)
		os.Exit(1)
	}
}

func run(path, typ string, reads, rounds int, seed uint64) error {
	db, err := engine.Open(path, engine.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	devices, err := db.Devices(typ, "")
	if err != nil {
		return err
	}
	if len(devices) == 0 {
		return fmt.Errorf("type %q has no devices", typ)
	}
	fmt.Printf("%d devices of %s; %d rounds of %d reads of one random device\n", len(devices), typ, rounds, reads)
	rng := rand.New(rand.NewPCG(seed, 1))
	one := make([]string, 1)
	for round := range rounds {
		took := make([]time.Duration, reads)
		for i := range took {
			one[0] = devices[rng.IntN(len(devices))].Name
			start := time.Now()
			rows, err := db.Scan(context.Background(), engine.ScanRequest{Type: typ, Devices: one, ReuseBatches: true})
			if err != nil {
				return err
			}
			n := 0
			for b, ok := rows.Next(); ok; b, ok = rows.Next() {
				n += b.Rows.Rows()
			}
			err = rows.Err()
			rows.Close()
			took[i] = time.Since(start)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("device %q: no rows", one[0])
			}
		}
		slices.Sort(took)
		fmt.Printf("round %d: p50 %v  p90 %v  p99 %v\n", round+1,
			took[reads/2].Round(100*time.Nanosecond), took[reads*9/10].Round(100*time.Nanosecond), took[reads*99/100].Round(100*time.Nanosecond))
	}
	return nil
}

// readAll reads every regular file under dir once, into the page cache.
func readAll(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(io.Discard, f)
		return err
	})
}
