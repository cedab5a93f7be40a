import Foundation
import Prometheus
import Synchronization

/// The service's Prometheus metrics, in its own registry (no process-wide bootstrap, so
/// several servers can run in one test process): request latency by method, route and status
/// class; swipes recorded; errors by status.
public final class ServerMetrics: Sendable {
    /// The registry `/metrics` prints.
    public let registry = PrometheusCollectorRegistry()
    let swipes: Counter
    let buckets: [Duration] = [.microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
                               .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                               .milliseconds(1000)]

    /// Creates the metrics.
    public init() {
        swipes = registry.makeCounter(name: "swiperank_swipes_recorded_total", help: "Swipes recorded (new, not retries).")
    }

    /// The latency histogram of each (method, route, status class) met so far: the registry's
    /// lookup builds the label strings and takes its lock on every call (a percent of a cached
    /// deck request's CPU). Routes are the router's templates, so the keys are few.
    private let histograms = Mutex<[HistogramKey: DurationHistogram]>([:])

    private struct HistogramKey: Hashable {
        let method: String, route: String, statusClass: Int
    }

    func record(method: String, route: String, status: Int, duration: Duration) {
        let key = HistogramKey(method: method, route: route, statusClass: status / 100)
        let histogram = histograms.withLock { known in
            if let histogram = known[key] { return histogram }
            let labels = [("method", method), ("route", route), ("status", "\(key.statusClass)xx")]
            let made = registry.makeDurationHistogram(name: "swiperank_http_request_duration_seconds", labels: labels, buckets: buckets,
                                                      help: "HTTP request latency by route.")
            known[key] = made
            return made
        }
        histogram.record(duration)
        if status >= 400 {
            registry.makeCounter(name: "swiperank_http_errors_total", labels: [("route", route), ("status", "\(status)")],
                                 help: "Error responses by route and status.").increment()
        }
    }

    /// What became of a webhook attempt.
    enum WebhookResult: String { case delivered, retried, failed }

    /// Counts a webhook attempt's outcome.
    func webhooks(_ result: WebhookResult) {
        registry.makeCounter(name: "swiperank_webhook_attempts_total", labels: [("result", result.rawValue)],
                             help: "Webhook delivery attempts by outcome (retried: will be tried again; failed: given up).").increment()
    }

    /// The exposition text.
    public func render() -> String { registry.emitToString() }
}
