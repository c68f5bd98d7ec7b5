// swift-tools-version:6.2
import PackageDescription

// The shipped executables link with lld: relative relocations packed (DT_RELR: 2.3 MB of `.rela.dyn` became 19 KB,
// not read at each start) and no symbol table exported (the executable exported 18,000 symbols that nothing looks
// up, and `dladdr` scans them): 2-3 MiB less resident, as measured when they came in.
let shippedLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
        .when(configuration: .release))
]

let package = Package(
    name: "QueuePlayer",
    products: [
        .library(name: "QueuePlayer", targets: ["QueuePlayer"]),
        .executable(name: "playerctl", targets: ["playerctl"]),
        .executable(name: "queueplayerd", targets: ["queueplayerd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CMpg123",
            pkgConfig: "libmpg123",
            providers: [.apt(["libmpg123-dev"])]
        ),
        .systemLibrary(
            name: "CPulse",
            pkgConfig: "libpulse",
            providers: [.apt(["libpulse-dev"])]
        ),
        .systemLibrary(
            name: "CSoxr",
            pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]
        ),
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "CSDBus",
            linkerSettings: [.linkedLibrary("systemd")]
        ),
        // Named POSIX threads for the engine, the null sink and the service, without Foundation's `Thread`.
        .target(name: "PosixThreads"),
        .target(
            name: "QueuePlayer",
            dependencies: [
                "PosixThreads",
                "CMpg123",
                "CPulse",
                "CSoxr",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "QueuePlayerControl",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "QueuePlayerService",
            dependencies: [
                "PosixThreads",
                "QueuePlayer",
                "QueuePlayerControl",
                "CMalloc",
                "CSDBus",
                "CXML2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The client verbs: they link neither libpulse nor GRDB and Foundation, so that a verb starts in about a
        // millisecond; `playerctl daemon` becomes `queueplayerd` (exec, same process).
        .executableTarget(
            name: "playerctl",
            dependencies: [
                "QueuePlayerControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: shippedLinkerSettings
        ),
        .executableTarget(
            name: "queueplayerd",
            dependencies: [
                "QueuePlayer",
                "QueuePlayerControl",
                "QueuePlayerService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            linkerSettings: shippedLinkerSettings
        ),
        .executableTarget(
            name: "LifecycleProbe",
            dependencies: ["QueuePlayer", .product(name: "Logging", package: "swift-log")],
            path: "Tests/LifecycleProbe"
        ),
        .target(name: "RealTimeAudit", path: "Tests/RealTimeAudit"),
        .executableTarget(
            name: "RenderPathAudit",
            dependencies: [
                "QueuePlayer", "RealTimeAudit", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/RenderPathAudit"
        ),
        .executableTarget(
            name: "QueuePlayerFuzz",
            dependencies: [
                "QueuePlayer", "QueuePlayerControl", "QueuePlayerService",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Tests/Fuzz",
            exclude: ["Corpus"]
        ),
        .target(
            name: "TestSupport",
            dependencies: [
                "CMalloc", "QueuePlayer", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/TestSupport"
        ),
        .target(name: "TestTiers", path: "Tests/TestTiers"),
        .testTarget(
            name: "QueuePlayerTests",
            // Not on RenderPathAudit, which it runs: a test bundle links the code of the executables it depends on,
            // and RenderPathAudit's interposers must stay in that process alone. `swift build` builds it.
            dependencies: [
                "QueuePlayer", "TestSupport", "TestTiers", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "QueuePlayerServiceTests",
            dependencies: [
                "QueuePlayer", "QueuePlayerControl", "QueuePlayerService", "TestSupport", "TestTiers",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "playerctlTests",
            dependencies: ["playerctl", "queueplayerd", "LifecycleProbe", "TestSupport", "TestTiers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
