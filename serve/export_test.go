package serve

import "time"

// FastWebhook makes the webhook's retries quick for a test.
func FastWebhook() (restore func()) {
	backoff := webhookBackoff
	webhookBackoff = time.Millisecond
	return func() { webhookBackoff = backoff }
}
