package payments

// NOTE: the service: accounts and their balances, the ledger of
// transfers, the methods over them, the ledger's subscriptions through
// topics, and the readiness check.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// Errors of the service's methods: application codes, outside the
// range JSON-RPC reserves.
var (
	ErrUnknownAccount = handler.NewError(4001, "unknown account")
	ErrInsufficient   = handler.NewError(4002, "insufficient funds")
	ErrBadAmount      = handler.NewError(4003, "the amount must be positive")
)

// Transfer is one entry of the ledger.
type Transfer struct {
	ID     int64  `json:"id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
}

// TransferParams are the params of transfer.
type TransferParams struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
	Key    string `json:"key,omitempty"` // the idempotency key where no header carries one (WebSocket)
}

// AccountParams are the params of balance_get and history.
type AccountParams struct {
	Account string `json:"account"`
}

// Service is the state of one node: balances and the ledger.
type Service struct {
	log   *slog.Logger
	feed  *topics.Topics
	down  atomic.Bool
	ran   atomic.Int64 // transfers applied, for tests that count retries
	mu    sync.Mutex
	bal   map[string]int64
	trans []Transfer
}

// New returns a service with the accounts and their opening balances,
// publishing its transfers on feed (topics "ledger" and "ledger.A").
func New(accounts map[string]int64, feed *topics.Topics, log *slog.Logger) *Service {
	s := &Service{log: log, feed: feed, bal: make(map[string]int64, len(accounts))}
	for a, b := range accounts {
		s.bal[a] = b
	}
	return s
}

// Register puts the service's methods on t.
func (s *Service) Register(t *handler.Table) {
	handler.Register(t, "balance_get", s.balance, handler.Inline(), handler.Summary("an account's balance"))
	handler.Register(t, "transfer", s.transfer, handler.Require("write"), handler.Timeout(2*time.Second),
		handler.Summary("moves amount from one account to another"), handler.Errors(ErrUnknownAccount, ErrInsufficient, ErrBadAmount))
	handler.Register(t, "history", s.history, handler.Summary("an account's transfers, newest first"))
	handler.RegisterSubscriptionKinds(t, "ledger", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("transfers", func(_ context.Context, _ struct{}, sub *handler.Subscription) error {
			return s.feed.Subscribe(sub, "ledger")
		}),
		handler.NewSubscriptionKind("account", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
			if s.known(p[0]) != nil {
				return ErrUnknownAccount
			}
			return s.feed.Subscribe(sub, "ledger."+p[0])
		}),
	}, handler.SubscriptionMethods(handler.SubscriptionNames{Notification: "ledger_transfer"}), handler.Notifies[Transfer]())
}

// Ready is the readiness check (engine.WithReady): an error while the
// store is down.
func (s *Service) Ready() error {
	if s.down.Load() {
		return errors.New("store unreachable")
	}
	return nil
}

// SetStoreUp marks the service's store up or down, as a probe of a real
// database would.
func (s *Service) SetStoreUp(up bool) { s.down.Store(!up) }

// Applied returns how many transfers the service applied.
func (s *Service) Applied() int64 { return s.ran.Load() }

func (s *Service) known(account string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bal[account]; !ok {
		return ErrUnknownAccount
	}
	return nil
}

func (s *Service) balance(_ context.Context, p AccountParams) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.bal[p.Account]
	if !ok {
		return 0, ErrUnknownAccount
	}
	return b, nil
}

func (s *Service) transfer(ctx context.Context, p TransferParams) (Transfer, error) {
	if p.Amount <= 0 {
		return Transfer{}, ErrBadAmount
	}
	s.mu.Lock()
	from, okFrom := s.bal[p.From]
	_, okTo := s.bal[p.To]
	switch {
	case !okFrom || !okTo:
		s.mu.Unlock()
		return Transfer{}, ErrUnknownAccount
	case from < p.Amount:
		s.mu.Unlock()
		return Transfer{}, ErrInsufficient
	}
	s.bal[p.From] -= p.Amount
	s.bal[p.To] += p.Amount
	tr := Transfer{ID: int64(len(s.trans) + 1), From: p.From, To: p.To, Amount: p.Amount}
	s.trans = append(s.trans, tr)
	s.mu.Unlock()
	s.ran.Add(1)
	call := handler.CallFrom(ctx)
	s.log.Info("transfer", "id", tr.ID, "request", string(call.ID), "principal", handler.MetaFrom(ctx).Principal)
	for _, topic := range []string{"ledger", "ledger." + tr.From, "ledger." + tr.To} {
		if _, err := s.feed.Publish(topic, tr); err != nil {
			s.log.Warn("ledger feed", "topic", topic, "err", err)
		}
	}
	return tr, nil
}

func (s *Service) history(_ context.Context, p AccountParams) ([]Transfer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bal[p.Account]; !ok {
		return nil, ErrUnknownAccount
	}
	var out []Transfer
	for i := len(s.trans) - 1; i >= 0; i-- {
		if t := s.trans[i]; t.From == p.Account || t.To == p.Account {
			out = append(out, t)
		}
	}
	return out, nil
}
