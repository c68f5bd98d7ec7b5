// swift-tools-version:6.2
import PackageDescription

// A program outside the QueuePlayer package that uses its library as any other package does: by path, through the
// public API alone. `scripts/api check` builds it and plays fixtures through a sink of its own.
let package = Package(
    name: "OutsideClient",
    dependencies: [
        .package(name: "QueuePlayer", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "OutsideClient",
            dependencies: [
                .product(name: "QueuePlayer", package: "QueuePlayer"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
