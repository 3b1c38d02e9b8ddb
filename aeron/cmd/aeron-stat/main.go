// Command aeron-stat prints a running media driver's counters (like
// Aeron's AeronStat), with -errors its distinct error log (like ErrorStat)
// and with -loss its loss report (like LossStat), reading cnc.dat and
// loss-report.dat directly.
//
//	go run ./aeron/cmd/aeron-stat -dir /dev/shm/aeron-me [-errors | -loss] [-watch 1s]
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
	loss := flag.Bool("loss", false, "print the driver's loss report (streams whose receiver saw gaps) instead of counters")
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
		switch {
		case *errs:
			_, err = aeron.WriteErrors(os.Stdout, cnc)
		case *loss:
			_, err = aeron.WriteLossReport(os.Stdout, *dir)
		default:
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
