package segment_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// A flush: write one file of a type's rows, commit it to the type's Delta
// log, then read one device back through the log.
func Example() {
	dir, _ := os.MkdirTemp("", "segment-example")
	defer os.RemoveAll(dir)

	layout := segment.Layout{TimeUnit: "ms", Columns: []segment.Column{
		{ID: 1, Name: "temperature", Type: schema.Double},
		{ID: 2, Name: "status", Type: schema.String},
	}}
	w, err := segment.Create(filepath.Join(dir, "part-00000000000000000000-0.parquet"), layout, segment.WriterOptions{Sync: true})
	if err != nil {
		panic(err)
	}
	for _, dev := range []string{"s-1", "s-2"} { // devices in order
		err := w.Append(dev, &tablet.Tablet{
			Times: []int64{1000, 2000, 3000},
			Columns: []tablet.Column{
				tablet.Doubles("temperature", []float64{20.5, 0, 21}, []bool{true, false, true}),
				tablet.Strings("status", []string{"ok", "ok", "hot"}, nil),
			},
		})
		if err != nil {
			w.Abort()
			panic(err)
		}
	}
	info, err := w.Close()
	if err != nil {
		w.Abort()
		panic(err)
	}

	table, _ := segment.OpenTable(dir, -1)
	err = table.Commit(segment.Commit{
		Metadata: &segment.Metadata{ID: "0d9c1f9e-3b7a-4c54-a1de-6f3a8f6b2c11", Name: "Sensor", SchemaString: layout.DeltaSchema()},
		Adds:     []segment.AddFile{{Path: info.Name, Size: info.Size, ModificationTime: 1, Stats: info.Stats}},
	}, true)
	if err != nil {
		panic(err)
	}
	fmt.Println("version", table.Version(), "rows", info.Rows)

	for _, a := range table.Files() {
		f, err := segment.Open(filepath.Join(dir, a.Path), a.Size)
		if err != nil {
			panic(err)
		}
		c := f.Read("s-2", layout.Columns, 2000, 10000, 0)
		for b, err := c.Next(); b != nil || err != nil; b, err = c.Next() {
			if err != nil {
				panic(err)
			}
			for i, t := range b.Times {
				temp := "null"
				if b.Columns[0].Valid(i) {
					temp = fmt.Sprint(b.Columns[0].Double(i))
				}
				fmt.Println(t, temp, string(b.Columns[1].Bytes(i)))
			}
		}
		f.Close()
	}
	// Output:
	// version 0 rows 6
	// 2000 null ok
	// 3000 21 hot
}
