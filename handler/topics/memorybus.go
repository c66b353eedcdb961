package topics

import (
	"errors"
	"sync"
)

// NOTE: MemoryBus, a Broker for nodes in one process: each node's
// Broker (memoryNode) publishes to the subscriptions of the others,
// synchronously, in its Publish.

// MemoryBus joins the Topics of several nodes in one process: a Broker
// for each (Node), for tests and for several tables served by one
// process. Messages are delivered synchronously, in Publish. Its
// methods, and those of its nodes' Brokers, are safe from any goroutine.
type MemoryBus struct {
	mu   sync.Mutex
	subs map[string][]*memorySub // guarded by mu
}

// memorySub is one subscription of a node on a MemoryBus.
type memorySub struct {
	node    *memoryNode
	deliver func([]byte)
	mu      sync.Mutex // held by a delivery; stop takes it so that no delivery follows
	stopped bool       // guarded by mu
}

// memoryNode is the Broker of one node on a MemoryBus.
type memoryNode struct{ bus *MemoryBus }

// NewMemoryBus returns an empty bus.
func NewMemoryBus() *MemoryBus { return &MemoryBus{subs: map[string][]*memorySub{}} }

// Node returns the Broker of one more node on the bus.
func (m *MemoryBus) Node() Broker { return &memoryNode{bus: m} }

// Subscriptions returns the bus's live subscriptions on topic, all nodes
// together.
func (m *MemoryBus) Subscriptions(topic string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.subs[topic])
}

// Subscribe implements Broker.
func (n *memoryNode) Subscribe(topic string, deliver func([]byte)) (func(), error) {
	if deliver == nil {
		return nil, errors.New("jetrpc: MemoryBus: nil deliver")
	}
	s := &memorySub{node: n, deliver: deliver}
	m := n.bus
	m.mu.Lock()
	m.subs[topic] = append(m.subs[topic], s)
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		list := m.subs[topic]
		for i, x := range list {
			if x == s {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(m.subs, topic)
		} else {
			m.subs[topic] = list
		}
		m.mu.Unlock()
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}, nil
}

// Publish implements Broker.
func (n *memoryNode) Publish(topic string, payload []byte) error {
	m := n.bus
	m.mu.Lock()
	list := append([]*memorySub(nil), m.subs[topic]...)
	m.mu.Unlock()
	for _, s := range list {
		if s.node == n {
			continue
		}
		s.mu.Lock()
		if !s.stopped {
			s.deliver(payload)
		}
		s.mu.Unlock()
	}
	return nil
}
