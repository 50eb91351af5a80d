{{/* The chart's name, overridable. */}}
{{- define "arbiter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: the release name, with the chart's if it lacks it. */}}
{{- define "arbiter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "arbiter.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "arbiter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arbiter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "arbiter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "arbiter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "arbiter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "arbiter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "arbiter.apiKeysSecretName" -}}
{{- default (printf "%s-api-keys" (include "arbiter.fullname" .)) .Values.apiKeys.existingSecret -}}
{{- end -}}

{{/* Whether the audit log goes to Redis. */}}
{{- define "arbiter.redisEnabled" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret -}}true{{- end -}}
{{- end -}}

{{- define "arbiter.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The admission webhooks' cert-manager objects (admission.certManager.enabled). */}}
{{- define "arbiter.admissionCertificateName" -}}
{{- printf "%s-admission" (include "arbiter.fullname" .) -}}
{{- end -}}

{{- define "arbiter.admissionCaName" -}}
{{- printf "%s-admission-ca" (include "arbiter.fullname" .) -}}
{{- end -}}

{{/* The Secret cert-manager writes the serving certificate to, mounted into the pods. */}}
{{- define "arbiter.admissionCertManagerSecretName" -}}
{{- printf "%s-admission-serving-tls" (include "arbiter.fullname" .) -}}
{{- end -}}

{{/* Where the pods mount that Secret (--admission-cert-dir). */}}
{{- define "arbiter.admissionCertDir" -}}
/etc/arbiter/admission-tls
{{- end -}}

{{/* Whether the leader generates the certificates and keeps them in admission.certSecretName. */}}
{{- define "arbiter.admissionGeneratesCerts" -}}
{{- if and .Values.admission.enabled (not .Values.admission.certManager.enabled) -}}true{{- end -}}
{{- end -}}
