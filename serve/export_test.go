package serve

import "time"

// FastWebhook makes the webhook's retries quick for a test.
func FastWebhook() (restore func()) {
	backoff := webhookBackoff
	webhookBackoff = time.Millisecond
	return func() { webhookBackoff = backoff }
}

// SmallWebhook gives webhooks a queue of queue batches of one match each,
// and drain for a query's end to wait for it.
func SmallWebhook(queue int, drain time.Duration) (restore func()) {
	q, rows, d := webhookQueue, webhookRows, webhookDrain
	webhookQueue, webhookRows, webhookDrain = queue, 1, drain
	return func() { webhookQueue, webhookRows, webhookDrain = q, rows, d }
}

// MaxAnswer is the bound of an answer's results, in bytes.
const MaxAnswer = maxAnswer

// SmallAnswers bounds sv's answers to max bytes, whole MiB.
func SmallAnswers(sv *Server, max int) { sv.answer = max }
