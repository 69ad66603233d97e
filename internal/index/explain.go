package index

import (
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// Explain turns an error of a read of the index whose table does not
// exist (MySQL error 1146) into the advice to run init; any other error is
// returned as it is.
func Explain(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1146 {
		return fmt.Errorf("%w: the index has no dbtrail schema yet; run dbtrail init", err)
	}
	return err
}
