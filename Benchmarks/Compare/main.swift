// The Swift side of `Benchmarks/compare`: score + top-20 over a matrix written by compare.py,
// timed the same way as the numpy and faiss sides (median of repeated single queries).
//
//   swiperank-compare <matrix.f32> <rows> <columns> <weights.f32> <threads> <repetitions>
//
// Prints one JSON line: median and p99 in µs, and the top-20 indices (checked against numpy).

import Foundation
import SwipeRankNumerics

func readFloats(_ path: String, count: Int) -> [Float] {
    let data = FileManager.default.contents(atPath: path)!
    precondition(data.count == count * 4, "\(path) holds \(data.count) bytes, expected \(count * 4)")
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let rows = Int(arguments[2]), let columns = Int(arguments[3]),
      let threads = Int(arguments[5]), let repetitions = Int(arguments[6]) else {
    FileHandle.standardError.write(Data("usage: swiperank-compare matrix.f32 rows columns weights.f32 threads repetitions\n".utf8))
    exit(2)
}
// Stored feature-major (d × N), the layout SwipeRank's Catalog scores with.
let x = Matrix(rows: rows, columns: columns, elements: readFloats(arguments[1], count: rows * columns)).transposed
let w = readFloats(arguments[4], count: columns)
BLASThreads.count = threads
var scores = [Float](repeating: 0, count: rows)
var selector = TopKSelector()
var top: [Int] = []
var times: [Double] = []
times.reserveCapacity(repetitions)
for i in 0..<(repetitions + 20) {
    let start = DispatchTime.now().uptimeNanoseconds
    x.multiplyTransposed(w, into: &scores)
    selector.select(k: 20, from: scores, into: &top)
    let end = DispatchTime.now().uptimeNanoseconds
    if i >= 20 { times.append(Double(end - start) / 1000) }   // the first 20 are warm-up
}
times.sort()
let median = times[times.count / 2], p99 = times[min(times.count - 1, times.count * 99 / 100)]
print("{\"median_us\": \(median), \"p99_us\": \(p99), \"top\": \(top)}")
