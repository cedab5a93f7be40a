import Foundation

/// Minimal, dependency-free SVG charts for the evaluation report: line charts with optional
/// vertical markers, and bar charts with optional error whiskers. Output is deterministic
/// (fixed number formatting), so a report can be diffed.
public enum SVGChart {
    /// One line of a line chart.
    public struct Series: Sendable {
        /// The legend label.
        public var label: String
        /// The points (x, y).
        public var points: [(x: Double, y: Double)]

        /// Creates a series.
        ///
        /// - Parameters:
        ///   - label: The legend label.
        ///   - points: The points.
        public init(label: String, points: [(x: Double, y: Double)]) {
            self.label = label
            self.points = points
        }
    }

    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    static func n(_ x: Double) -> String { String(format: "%.1f", x) }
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// A line chart.
    ///
    /// - Parameters:
    ///   - title: The title.
    ///   - xLabel: The x-axis label.
    ///   - yLabel: The y-axis label.
    ///   - series: The lines.
    ///   - yRange: The y-axis range.
    ///   - markers: Vertical dashed lines at x, with a label each (e.g. phase boundaries).
    /// - Returns: SVG text.
    public static func lines(title: String, xLabel: String, yLabel: String, series: [Series], yRange: ClosedRange<Double>,
                             markers: [(x: Double, label: String)] = []) -> String {
        let width = 720.0, height = 420.0, left = 60.0, right = 190.0, top = 40.0, bottom = 50.0
        let xs = series.flatMap { $0.points.map(\.x) } + markers.map(\.x)
        let xMin = xs.min() ?? 0, xMax = max(xs.max() ?? 1, xMin + 1)
        func px(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * (width - left - right) }
        func py(_ y: Double) -> Double { top + (1 - (y - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound)) * (height - top - bottom) }
        var out = header(width, height, title)
        out += axes(left: left, right: width - right, top: top, bottom: height - bottom, xLabel: xLabel, yLabel: yLabel)
        for k in 0...5 {
            let y = yRange.lowerBound + Double(k) / 5 * (yRange.upperBound - yRange.lowerBound)
            out += "<line x1=\"\(n(left))\" y1=\"\(n(py(y)))\" x2=\"\(n(width - right))\" y2=\"\(n(py(y)))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(n(left - 6))\" y=\"\(n(py(y) + 4))\" text-anchor=\"end\" font-size=\"11\">\(String(format: "%.2f", y))</text>\n"
        }
        for x in Set(series.flatMap { $0.points.map(\.x) }).sorted() {
            out += "<text x=\"\(n(px(x)))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\" font-size=\"11\">\(Int(x))</text>\n"
        }
        for marker in markers {
            out += "<line x1=\"\(n(px(marker.x)))\" y1=\"\(n(top))\" x2=\"\(n(px(marker.x)))\" y2=\"\(n(height - bottom))\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n"
            out += "<text x=\"\(n(px(marker.x) + 4))\" y=\"\(n(top + 12))\" font-size=\"11\" fill=\"#555\">\(escape(marker.label))</text>\n"
        }
        for (i, s) in series.enumerated() {
            let color = palette[i % palette.count]
            let path = s.points.map { "\(n(px($0.x))),\(n(py($0.y)))" }.joined(separator: " ")
            out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            for p in s.points { out += "<circle cx=\"\(n(px(p.x)))\" cy=\"\(n(py(p.y)))\" r=\"3\" fill=\"\(color)\"/>\n" }
            let ly = top + 20 + Double(i) * 20
            out += "<line x1=\"\(n(width - right + 15))\" y1=\"\(n(ly))\" x2=\"\(n(width - right + 35))\" y2=\"\(n(ly))\" stroke=\"\(color)\" stroke-width=\"3\"/>\n"
            out += "<text x=\"\(n(width - right + 40))\" y=\"\(n(ly + 4))\" font-size=\"12\">\(escape(s.label))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// A bar chart.
    ///
    /// - Parameters:
    ///   - title: The title.
    ///   - yLabel: The y-axis label.
    ///   - bars: Label, value, and an optional (lower, upper) whisker.
    ///   - yRange: The y-axis range.
    ///   - reference: An optional horizontal reference line (value, label).
    /// - Returns: SVG text.
    public static func bars(title: String, yLabel: String, bars: [(label: String, value: Double, interval: (Double, Double)?)],
                            yRange: ClosedRange<Double>, reference: (value: Double, label: String)? = nil) -> String {
        let width = 720.0, height = 420.0, left = 60.0, right = 30.0, top = 40.0, bottom = 70.0
        func py(_ y: Double) -> Double { top + (1 - (y - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound)) * (height - top - bottom) }
        var out = header(width, height, title)
        out += axes(left: left, right: width - right, top: top, bottom: height - bottom, xLabel: "", yLabel: yLabel)
        for k in 0...5 {
            let y = yRange.lowerBound + Double(k) / 5 * (yRange.upperBound - yRange.lowerBound)
            out += "<line x1=\"\(n(left))\" y1=\"\(n(py(y)))\" x2=\"\(n(width - right))\" y2=\"\(n(py(y)))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(n(left - 6))\" y=\"\(n(py(y) + 4))\" text-anchor=\"end\" font-size=\"11\">\(String(format: "%.2f", y))</text>\n"
        }
        let slot = (width - left - right) / Double(max(1, bars.count))
        for (i, bar) in bars.enumerated() {
            let x = left + Double(i) * slot + slot * 0.15, w = slot * 0.7
            let y = py(min(max(bar.value, yRange.lowerBound), yRange.upperBound))
            out += "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(w))\" height=\"\(n(py(yRange.lowerBound) - y))\" fill=\"\(palette[i % palette.count])\"/>\n"
            if let (lo, hi) = bar.interval {
                let cx = x + w / 2
                out += "<line x1=\"\(n(cx))\" y1=\"\(n(py(lo)))\" x2=\"\(n(cx))\" y2=\"\(n(py(hi)))\" stroke=\"#000\" stroke-width=\"1.5\"/>\n"
                out += "<line x1=\"\(n(cx - 6))\" y1=\"\(n(py(lo)))\" x2=\"\(n(cx + 6))\" y2=\"\(n(py(lo)))\" stroke=\"#000\"/>\n"
                out += "<line x1=\"\(n(cx - 6))\" y1=\"\(n(py(hi)))\" x2=\"\(n(cx + 6))\" y2=\"\(n(py(hi)))\" stroke=\"#000\"/>\n"
            }
            // The value sits above the bar and its whisker; labels alternate rows so long ones do not collide.
            let labelY = min(y, bar.interval.map { py($0.1) } ?? y) - 6
            out += "<text x=\"\(n(x + w / 2))\" y=\"\(n(labelY))\" text-anchor=\"middle\" font-size=\"11\">\(String(format: "%.3f", bar.value))</text>\n"
            out += "<text x=\"\(n(x + w / 2))\" y=\"\(n(height - bottom + 16 + Double(i % 2) * 14))\" text-anchor=\"middle\" font-size=\"11\">\(escape(bar.label))</text>\n"
        }
        if let reference {
            out += "<line x1=\"\(n(left))\" y1=\"\(n(py(reference.value)))\" x2=\"\(n(width - right))\" y2=\"\(n(py(reference.value)))\" stroke=\"#d62728\" stroke-dasharray=\"6 3\"/>\n"
            out += "<text x=\"\(n(left + 4))\" y=\"\(n(py(reference.value) - 4))\" font-size=\"11\" fill=\"#d62728\">\(escape(reference.label))</text>\n"
        }
        return out + "</svg>\n"
    }

    static func header(_ width: Double, _ height: Double, _ title: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"Helvetica, Arial, sans-serif\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
            + "<text x=\"\(Int(width / 2))\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">\(escape(title))</text>\n"
    }

    static func axes(left: Double, right: Double, top: Double, bottom: Double, xLabel: String, yLabel: String) -> String {
        "<line x1=\"\(n(left))\" y1=\"\(n(bottom))\" x2=\"\(n(right))\" y2=\"\(n(bottom))\" stroke=\"#000\"/>\n"
            + "<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(bottom))\" stroke=\"#000\"/>\n"
            + "<text x=\"\(n((left + right) / 2))\" y=\"\(n(bottom + 36))\" text-anchor=\"middle\" font-size=\"12\">\(escape(xLabel))</text>\n"
            + "<text x=\"16\" y=\"\(n((top + bottom) / 2))\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 \(n((top + bottom) / 2)))\">\(escape(yLabel))</text>\n"
    }
}
