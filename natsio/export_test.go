package natsio

// SetPauseAfterGuard sets the hook run between an owner's ownership check
// and the publishing of its matches, with the number of rules (sinks)
// that hold some.
func SetPauseAfterGuard(f func(rules int)) { pauseAfterGuard = f }
