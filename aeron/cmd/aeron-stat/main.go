// Command aeron-stat prints a running media driver's counters (like
// Aeron's AeronStat) and, with -errors, its distinct error log (like
// ErrorStat), reading cnc.dat directly.
//
//	go run ./aeron/cmd/aeron-stat -dir /dev/shm/aeron-me [-errors] [-watch 1s]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/goblin-kv/goblin/aeron"
)

func main() {
	dir := flag.String("dir", aeron.DefaultDir(), "Aeron directory of the media driver")
	errs := flag.Bool("errors", false, "print the driver's distinct error log instead of counters")
	watch := flag.Duration("watch", 0, "repeat every interval (0: print once)")
	flag.Parse()
	cnc, err := aeron.OpenCnC(*dir)
	if err != nil {
		log.Fatal(err)
	}
	defer cnc.Close()
	for {
		fmt.Printf("%s - driver pid %d, heartbeat age %d ms\n", time.Now().Format(time.TimeOnly),
			cnc.DriverPID(), time.Now().UnixMilli()-cnc.DriverHeartbeat())
		if *errs {
			_, err = aeron.WriteErrors(os.Stdout, cnc)
		} else {
			err = aeron.WriteCounters(os.Stdout, cnc.Counters())
		}
		if err != nil {
			log.Fatal(err)
		}
		if *watch <= 0 {
			return
		}
		time.Sleep(*watch)
	}
}
