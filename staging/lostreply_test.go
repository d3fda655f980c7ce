package staging

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// lostReplyStore applies a writer's Commit and then reports failErr, as
// when a PUT's reply is lost and the client's own retry meets the object
// it just wrote (412), or gives up (outcome unknown). With overwrite set,
// the object left behind has other bytes.
type lostReplyStore struct {
	store.Store
	failErr   error
	overwrite bool
	failed    int
}

func (l *lostReplyStore) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	w, err := l.Store.NewWriter(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &lostReplyWriter{Writer: w, l: l, key: key}, nil
}

type lostReplyWriter struct {
	store.Writer
	l   *lostReplyStore
	key string
}

func (w *lostReplyWriter) Commit() (store.Attrs, error) {
	a, err := w.Writer.Commit()
	if err != nil {
		return a, err
	}
	if w.l.overwrite {
		if _, err := w.l.Store.Put(context.Background(), w.key, []byte("other bytes"), store.PutOptions{}); err != nil {
			return a, err
		}
	}
	w.l.failed++
	return store.Attrs{}, w.l.failErr
}

func TestCommitLostReply(t *testing.T) {
	rows := makeRows(3000, 51)
	_, want := stageStructs(t, Options{TargetFileSize: 32 << 10}, rows)
	for _, failErr := range []error{
		fmt.Errorf("put: %w", store.ErrPrecondition),
		fmt.Errorf("put: %w", store.ErrTransient),
	} {
		t.Run(failErr.Error(), func(t *testing.T) {
			ls := &lostReplyStore{Store: memstore.New(), failErr: failErr}
			s := New(context.Background(), ls, testPrefix, Options{TargetFileSize: 32 << 10})
			if err := Write(s, rows...); err != nil {
				t.Fatal(err)
			}
			c := finish(t, s)
			if ls.failed < 2 {
				t.Fatalf("only %d commits failed", ls.failed)
			}
			checkContent(t, ls.Store, c, int64(len(rows)))
			if c.ContentChecksum != want.ContentChecksum || len(c.Files) != len(want.Files) {
				t.Errorf("content differs from a clean run")
			}
			for i := range c.Files {
				if !reflect.DeepEqual(c.Files[i], want.Files[i]) {
					t.Errorf("file %d: %+v, want %+v", i, c.Files[i], want.Files[i])
				}
			}

			// Someone else's bytes under the key are not ours: fail.
			ls = &lostReplyStore{Store: memstore.New(), failErr: failErr, overwrite: true}
			s = New(context.Background(), ls, testPrefix, Options{})
			if err := Write(s, rows...); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Finish(context.Background()); !errors.Is(err, failErr) {
				t.Errorf("Finish over other bytes: %v", err)
			}
		})
	}
	// Other errors fail at once.
	ls := &lostReplyStore{Store: memstore.New(), failErr: store.ErrAccessDenied}
	s := New(context.Background(), ls, testPrefix, Options{})
	if err := Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(context.Background()); !errors.Is(err, store.ErrAccessDenied) {
		t.Errorf("Finish: %v", err)
	}
}
