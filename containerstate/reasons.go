package containerstate

// Waiting reasons the kubelet writes, from spec/containerstate.md section 5.
const (
	ReasonContainerCreating          = "ContainerCreating"
	ReasonPodInitializing            = "PodInitializing"
	ReasonCrashLoopBackOff           = "CrashLoopBackOff"
	ReasonErrImagePull               = "ErrImagePull"
	ReasonImagePullBackOff           = "ImagePullBackOff"
	ReasonInvalidImageName           = "InvalidImageName"
	ReasonErrImageNeverPull          = "ErrImageNeverPull"
	ReasonImageInspectError          = "ImageInspectError"
	ReasonRegistryUnavailable        = "RegistryUnavailable"
	ReasonSignatureValidationFailed  = "SignatureValidationFailed"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonPreCreateHookError         = "PreCreateHookError"
	ReasonPreStartHookError          = "PreStartHookError"
	ReasonCreateContainerError       = "CreateContainerError"
	ReasonRunContainerError          = "RunContainerError"
	ReasonPostStartHookError         = "PostStartHookError"
	ReasonRestartingAllContainers    = "RestartingAllContainers"
)

// Terminated reasons, from spec/containerstate.md section 6. Completed,
// Error, OOMKilled, StartError and ContainerCannotRun come from the runtime;
// ContainerStatusUnknown and RestartingAllContainers are made by the kubelet.
const (
	ReasonCompleted              = "Completed"
	ReasonError                  = "Error"
	ReasonOOMKilled              = "OOMKilled"
	ReasonStartError             = "StartError"
	ReasonContainerCannotRun     = "ContainerCannotRun"
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
)

// Messages the kubelet writes for the states it makes up itself.
const (
	// MessageUnknownTerminated is the message of a container the runtime
	// reports UNKNOWN after it was Running, and of a container TerminatePod
	// marks as failed.
	MessageUnknownTerminated = "The container could not be located when the pod was terminated"
	// MessageUnknownDeleted is the lastState message of a Running container
	// that disappeared from the runtime. The two spaces are the kubelet's.
	MessageUnknownDeleted = "The container could not be located when the pod was deleted.  The container used to be Running"
	// MessageRestartingAll is the message of a container removed by an
	// in-place restart of the whole pod (KEP-5532).
	MessageRestartingAll = "The container is removed because RestartAllContainers in place"
	// MessageInitInferred is the message of a regular init container the
	// runtime no longer has after the pod initialized.
	MessageInitInferred = "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"
)

// ExitCodeUnknown is the exit code the kubelet reports for a container whose
// real exit it could not observe (128 + SIGKILL).
const ExitCodeUnknown int32 = 137

// ExitCodeStartError is the exit code containerd reports for a task that
// never started.
const ExitCodeStartError int32 = 128
