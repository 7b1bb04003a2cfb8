package natsio

// SetPauseAfterGuard sets the hook run between an owner's ownership check
// and the publishing of its matches.
func SetPauseAfterGuard(f func()) { pauseAfterGuard = f }
