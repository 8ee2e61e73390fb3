package store

import (
	"context"
)

// Deleting or updating rows picked by a subquery goes in two statements
// here: the keys are read first, then the rows are deleted by key. MariaDB
// before 11.1 (Debian 12 ships 10.11) has no semi-join for a single-table
// DELETE or UPDATE: `DELETE FROM t WHERE k IN (SELECT ...)` reads every row
// of t and runs the subquery for each, under the state's write lock. With a
// long project's step_inputs (hundreds of thousands of rows) that was two
// to three seconds for each purged chain, every other write waiting on it.

// byKeysChunk bounds a statement's placeholders.
const byKeysChunk = 500

// deleteByKeys deletes the rows of table whose column col holds one of
// keys.
func deleteByKeys(ctx context.Context, tx txRunner, table, col string, keys []any) error {
	for len(keys) > 0 {
		part := keys[:min(len(keys), byKeysChunk)]
		keys = keys[len(part):]
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+col+` IN `+inList(len(part)), part...); err != nil {
			return err
		}
	}
	return nil
}

// deleteStepInputsWhere deletes the inputs of the steps the condition on
// steps picks (see above for why not in one statement).
func deleteStepInputsWhere(ctx context.Context, tx txRunner, cond string, args ...any) error {
	names, err := column(ctx, tx, `SELECT wu_name FROM steps WHERE `+cond, args...)
	if err != nil {
		return err
	}
	return deleteByKeys(ctx, tx, "step_inputs", "wu_name", anys(names))
}
