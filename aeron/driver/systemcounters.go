package driver

// System counters (io.aeron.driver.status.SystemCounterDescriptor): the
// first counters in the CnC, allocated in this order so that counter id ==
// system id. Type 0, key = the int32 id, registration id = the id, owner −1.
const (
	sysBytesSent = iota
	sysBytesReceived
	sysReceiverProxyFails
	sysSenderProxyFails
	sysConductorProxyFails
	sysNaksSent
	sysNaksReceived
	sysStatusMessagesSent
	sysStatusMessagesReceived
	sysHeartbeatsSent
	sysHeartbeatsReceived
	sysRetransmitsSent
	sysFlowControlUnderRuns
	sysFlowControlOverRuns
	sysInvalidPackets
	sysErrors
	sysShortSends
	sysFreeFails
	sysSenderFlowControlLimits
	sysUnblockedPublications
	sysUnblockedCommands
	sysPossibleTTLAsymmetry
	sysControllableIdleStrategy
	sysLossGapFills
	sysClientTimeouts
	sysResolutionChanges
	sysConductorMaxCycleTime
	sysConductorCycleThresholdExceeded
	sysSenderMaxCycleTime
	sysSenderCycleThresholdExceeded
	sysReceiverMaxCycleTime
	sysReceiverCycleThresholdExceeded
	sysNameResolverMaxTime
	sysNameResolverThresholdExceeded
	sysAeronVersion
	sysBytesCurrentlyMapped
	sysRetransmittedBytes
	sysRetransmitOverflow
	sysErrorFramesReceived
	sysErrorFramesSent
	sysPublicationsRevoked
	sysPublicationImagesRevoked
	sysImagesRejected
	sysControlProtocolVersion
	sysStatusMessagesRejected
	sysAsyncExecutorProxyFails
	numSystemCounters
)

// systemCounterLabels are the labels, in id order; "%v" is the version
// info ("version=1.51.0 commit=…").
var systemCounterLabels = [numSystemCounters]string{
	sysBytesSent:                       "Bytes sent",
	sysBytesReceived:                   "Bytes received",
	sysReceiverProxyFails:              "Failed offers to ReceiverProxy",
	sysSenderProxyFails:                "Failed offers to SenderProxy",
	sysConductorProxyFails:             "Failed offers to DriverConductorProxy",
	sysNaksSent:                        "NAKs sent",
	sysNaksReceived:                    "NAKs received",
	sysStatusMessagesSent:              "Status Messages sent",
	sysStatusMessagesReceived:          "Status Messages received",
	sysHeartbeatsSent:                  "Heartbeats sent",
	sysHeartbeatsReceived:              "Heartbeats received",
	sysRetransmitsSent:                 "Retransmits sent",
	sysFlowControlUnderRuns:            "Flow control under runs",
	sysFlowControlOverRuns:             "Flow control over runs",
	sysInvalidPackets:                  "Invalid packets",
	sysErrors:                          "Errors: %v",
	sysShortSends:                      "Short sends",
	sysFreeFails:                       "Failed attempts to free log buffers",
	sysSenderFlowControlLimits:         "Sender flow control limits, i.e. back-pressure events",
	sysUnblockedPublications:           "Unblocked Publications",
	sysUnblockedCommands:               "Unblocked Control Commands",
	sysPossibleTTLAsymmetry:            "Possible TTL Asymmetry",
	sysControllableIdleStrategy:        "ControllableIdleStrategy status",
	sysLossGapFills:                    "Loss gap fills",
	sysClientTimeouts:                  "Client liveness timeouts",
	sysResolutionChanges:               "Resolution changes",
	sysConductorMaxCycleTime:           "Conductor max cycle time doing its work in ns",
	sysConductorCycleThresholdExceeded: "Conductor work cycle exceeded threshold count",
	sysSenderMaxCycleTime:              "Sender max cycle time doing its work in ns",
	sysSenderCycleThresholdExceeded:    "Sender work cycle exceeded threshold count",
	sysReceiverMaxCycleTime:            "Receiver max cycle time doing its work in ns",
	sysReceiverCycleThresholdExceeded:  "Receiver work cycle exceeded threshold count",
	sysNameResolverMaxTime:             "NameResolver max time in ns",
	sysNameResolverThresholdExceeded:   "NameResolver exceeded threshold count",
	sysAeronVersion:                    "Aeron software: %v",
	sysBytesCurrentlyMapped:            "Bytes currently mapped",
	sysRetransmittedBytes:              "Retransmitted bytes",
	sysRetransmitOverflow:              "Retransmit Pool Overflow count",
	sysErrorFramesReceived:             "Error Frames received",
	sysErrorFramesSent:                 "Error Frames sent",
	sysPublicationsRevoked:             "Publications Revoked",
	sysPublicationImagesRevoked:        "Publication Images Revoked",
	sysImagesRejected:                  "Images rejected",
	sysControlProtocolVersion:          "Control protocol version",
	sysStatusMessagesRejected:          "Status Messages rejected",
	sysAsyncExecutorProxyFails:         "Failed offers to AsyncExecutorProxy",
}
