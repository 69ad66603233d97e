package activities

// DefaultIndexHours is how many hours of events the index keeps before the
// archive workflow moves them to object storage (--index-hours).
const DefaultIndexHours = 24
