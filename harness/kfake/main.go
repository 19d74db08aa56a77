// kfake, franz-go's in-process fake Kafka cluster, as a broker kconform did not write: started on
// 127.0.0.1 (one broker, a port chosen by the system unless -port says), it prints its address on
// one line and serves until its standard input closes, so it never outlives the test that started
// it. kconform's tests judge it as an external target (tests/apache_parser.rs): its differences
// from Apache are its own; what must hold is that kconform calls malformed only what Apache's own
// parser refuses.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free one)")
	flag.Parse()
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(*port),
		kfake.AllowAutoTopicCreation(),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println(c.ListenAddrs()[0])
	// Serve until whoever started us closes our standard input (or dies).
	r := bufio.NewReader(os.Stdin)
	for {
		if _, err := r.ReadByte(); err != nil {
			return
		}
	}
}
