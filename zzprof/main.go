package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

func main() {
	f, _ := os.Create(os.Args[2])
	pprof.StartCPUProfile(f)
	defer pprof.StopCPUProfile()
	t := time.Now()
	st, err := trace.OpenWith(os.Args[1], trace.OpenOptions{NoIntegrityCheck: true})
	if err != nil {
		panic(err)
	}
	runs, _ := st.Runs()
	for _, run := range runs {
		checks := analyze.General()
		r, _ := st.Events(run.ID)
		res, err := analyze.Evaluate(run, r, checks)
		if err != nil {
			panic(err)
		}
		fmt.Println(analyze.Summarize(res), time.Since(t))
	}
}
