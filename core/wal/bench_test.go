package wal

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppendSync measures Append followed by Sync, the commit path,
// with concurrent writers sharing fsyncs in full mode.
func BenchmarkAppendSync(b *testing.B) {
	for _, mode := range []SyncMode{SyncFull, SyncNormal, SyncOff} {
		for _, writers := range []int{1, 8} {
			for _, size := range []int{100, 10000} {
				name := fmt.Sprintf("mode=%s/writers=%d/bytes=%d", mode, writers, size)
				b.Run(name, func(b *testing.B) { benchAppendSync(b, mode, writers, size) })
			}
		}
	}
}

func benchAppendSync(b *testing.B, mode SyncMode, writers, size int) {
	l, err := Open(b.TempDir(), Options{Sync: mode})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	payload := make([]byte, size)
	before := l.Stats().Fsyncs
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()

	var next atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				lsn, err := l.Append(1, payload)
				if err == nil {
					err = l.Sync(lsn)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(l.Stats().Fsyncs-before)/float64(b.N), "fsyncs/op")
}

// BenchmarkOpenReplay: Open and replay a 64 MiB log of 64 KiB records (a
// memtable's worth left by a crash).
func BenchmarkOpenReplay(b *testing.B) {
	dir := b.TempDir()
	l, err := Open(dir, Options{Sync: SyncOff})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 64<<10)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	for range 1024 {
		if _, err := l.Append(1, payload); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		l, err := Open(dir, Options{Sync: SyncOff})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := l.Replay(func(LSN, byte, []byte) error { n++; return nil }); err != nil || n != 1024 {
			b.Fatal(err, n)
		}
		_ = l.Close()
	}
}
