package calls

// WriteViewsInput names the source whose views.sql follows its current
// snapshot.
type WriteViewsInput struct {
	Source string
}

// WriteViewsResult is what WriteViews did.
type WriteViewsResult struct {
	Path   string
	Wrote  bool // false: the file already held the views of current's shape
	Tables int
}
