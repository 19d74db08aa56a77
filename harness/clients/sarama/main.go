// kconform's workloads through sarama (github.com/IBM/sarama, the version kconform builds
// against): run as `kconform-sarama WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP OFFSET`, it prints what
// each client call returned or raised as one JSON object ({"calls": [...]}); kconform reads the
// topic back itself. Each error is handled as sarama documents: after an error in a
// transaction, a producer whose TxnStatus has the fatal flag is closed, any other aborts.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

const wait = 30 * time.Second

type call struct {
	Call    string  `json:"call"`
	Result  string  `json:"result"`
	Message *string `json:"message,omitempty"`
}

var (
	workload, bootstrap, topic, txn, group string
	offset                                 int64
	timeout                                = time.Minute
	calls                                  []call
)

// The sentinel errors sarama returns, by name.
var sentinels = map[string]error{
	"ErrOutOfBrokers":          sarama.ErrOutOfBrokers,
	"ErrClosedClient":          sarama.ErrClosedClient,
	"ErrNotConnected":          sarama.ErrNotConnected,
	"ErrShuttingDown":          sarama.ErrShuttingDown,
	"ErrAddPartitionsToTxn":    sarama.ErrAddPartitionsToTxn,
	"ErrTxnOffsetCommit":       sarama.ErrTxnOffsetCommit,
	"ErrTransactionNotReady":   sarama.ErrTransactionNotReady,
	"ErrNonTransactedProducer": sarama.ErrNonTransactedProducer,
	"ErrTransitionNotAllowed":  sarama.ErrTransitionNotAllowed,
}

// named is the error as the transcript names it: the broker's code for a KError, else
// sarama's sentinel, else the Go type.
func named(err error) string {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return fmt.Sprintf("KError %d", int16(kerr))
	}
	var perrs sarama.ProducerErrors
	if errors.As(err, &perrs) && len(perrs) > 0 {
		return named(perrs[0].Err)
	}
	var perr *sarama.ProducerError
	if errors.As(err, &perr) {
		return named(perr.Err)
	}
	for name, s := range sentinels {
		if errors.Is(err, s) {
			return name
		}
	}
	return fmt.Sprintf("%T", err)
}

// do runs one client call and records how it ended; the error.
func do(name string, step func() error) error {
	err := step()
	if err == nil {
		calls = append(calls, call{Call: name, Result: "ok"})
		return nil
	}
	message := err.Error()
	calls = append(calls, call{Call: name, Result: named(err), Message: &message})
	return err
}

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "kconform"
	c.Producer.Idempotent = true
	c.Producer.Transaction.ID = txn
	c.Producer.Transaction.Timeout = timeout
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Net.MaxOpenRequests = 1
	c.Net.DialTimeout = wait
	c.Net.ReadTimeout = wait
	c.Producer.Timeout = wait
	return c
}

// producer makes a transactional producer: sarama asks for its producer id here (its
// initTransactions).
func producer(p *sarama.SyncProducer) func() error {
	return func() error {
		made, err := sarama.NewSyncProducer(strings.Split(bootstrap, ","), config())
		*p = made
		return err
	}
}

func send(p sarama.SyncProducer, value string) error {
	if p == nil {
		return sarama.ErrClosedClient
	}
	_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(value)})
	return err
}

func begin(p sarama.SyncProducer) error {
	if p == nil {
		return sarama.ErrClosedClient
	}
	return p.BeginTxn()
}

func commit(p sarama.SyncProducer) func() error {
	return func() error {
		if p == nil {
			return sarama.ErrClosedClient
		}
		return p.CommitTxn()
	}
}

// endAfter is what the application does after err ended a step of p's transaction.
func endAfter(p sarama.SyncProducer, err error, who string) {
	if err == nil || p == nil || p.TxnStatus()&sarama.ProducerTxnFlagFatalError != 0 {
		return
	}
	do("abort ("+who+")", p.AbortTxn)
}

func closeAll(ps ...sarama.SyncProducer) {
	for _, p := range ps {
		if p != nil {
			_ = p.Close()
		}
	}
}

func fencing() {
	var first, second sarama.SyncProducer
	do("initTransactions", producer(&first))
	do("send in an open transaction", func() error {
		if err := begin(first); err != nil {
			return err
		}
		if err := send(first, "o0"); err != nil {
			return err
		}
		return send(first, "o1")
	})
	do("initTransactions (second producer)", producer(&second))
	err := do("commit (second producer)", func() error {
		if err := begin(second); err != nil {
			return err
		}
		if err := send(second, "n0"); err != nil {
			return err
		}
		return commit(second)()
	})
	endAfter(second, err, "second producer")
	endAfter(first, do("commit (fenced producer)", commit(first)), "fenced producer")
	closeAll(first, second)
}

func fencedSend() {
	var first, second sarama.SyncProducer
	do("initTransactions", producer(&first))
	do("send in an open transaction", func() error {
		if err := begin(first); err != nil {
			return err
		}
		return send(first, "o0")
	})
	do("initTransactions (second producer)", producer(&second))
	err := do("send (fenced producer)", func() error { return send(first, "o1") })
	if err == nil {
		err = do("commit (fenced producer)", commit(first))
	}
	endAfter(first, err, "fenced producer")
	err = do("commit (second producer)", func() error {
		if err := begin(second); err != nil {
			return err
		}
		if err := send(second, "n0"); err != nil {
			return err
		}
		return commit(second)()
	})
	endAfter(second, err, "second producer")
	closeAll(first, second)
}

// abortRedo: a transaction of two records aborted, then the work done again in the next, which
// commits.
func abortRedo() {
	var p sarama.SyncProducer
	do("initTransactions", producer(&p))
	do("abort", func() error {
		if err := begin(p); err != nil {
			return err
		}
		for _, v := range []string{"a0", "a1"} {
			if err := send(p, v); err != nil {
				return err
			}
		}
		return p.AbortTxn()
	})
	err := do("redo and commit", func() error {
		if err := begin(p); err != nil {
			return err
		}
		for _, v := range []string{"r0", "r1"} {
			if err := send(p, v); err != nil {
				return err
			}
		}
		return commit(p)()
	})
	endAfter(p, err, "producer")
	closeAll(p)
}

// timeoutPast: a transaction left open past its 2 s timeout, then committed; a new producer
// afterwards.
func timeoutPast() {
	timeout = 2 * time.Second
	var p, next sarama.SyncProducer
	do("initTransactions", producer(&p))
	do("send", func() error {
		if err := begin(p); err != nil {
			return err
		}
		if err := send(p, "t0"); err != nil {
			return err
		}
		return send(p, "t1")
	})
	time.Sleep(4 * time.Second)
	endAfter(p, do("commit after the timeout", commit(p)), "timed-out producer")
	closeAll(p)
	do("initTransactions (new producer)", producer(&next))
	err := do("commit (new producer)", func() error {
		if err := begin(next); err != nil {
			return err
		}
		if err := send(next, "n0"); err != nil {
			return err
		}
		return commit(next)()
	})
	endAfter(next, err, "new producer")
	closeAll(next)
}

// groupOffsets: offsets for the run's own group (its id only: no member) sent with a record.
func groupOffsets() {
	var p sarama.SyncProducer
	do("initTransactions", producer(&p))
	do("send", func() error {
		if err := begin(p); err != nil {
			return err
		}
		return send(p, "g0")
	})
	do("sendOffsetsToTransaction", func() error {
		if p == nil {
			return sarama.ErrClosedClient
		}
		offsets := map[string][]*sarama.PartitionOffsetMetadata{topic: {{Partition: 0, Offset: offset}}}
		return p.AddOffsetsToTxn(offsets, group)
	})
	endAfter(p, do("commitTransaction", commit(p)), "producer")
	closeAll(p)
}

func main() {
	if len(os.Args) < 7 {
		fmt.Fprintln(os.Stderr, "usage: kconform-sarama WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP OFFSET")
		os.Exit(2)
	}
	workload, bootstrap, topic, txn, group = os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	parsed, err := strconv.ParseInt(os.Args[6], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "OFFSET %q is no number\n", os.Args[6])
		os.Exit(2)
	}
	offset = parsed
	workloads := map[string]func(){
		"fencing":       fencing,
		"fenced-send":   fencedSend,
		"abort-redo":    abortRedo,
		"timeout-past":  timeoutPast,
		"group-offsets": groupOffsets,
	}
	run, ok := workloads[workload]
	if !ok {
		fmt.Fprintf(os.Stderr, "no workload %s for sarama\n", workload)
		os.Exit(2)
	}
	run()
	out, _ := json.Marshal(map[string][]call{"calls": calls})
	fmt.Println(string(out))
}
