package browser

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	_ "image/png" // decodes the worker's PNG screenshots for shrink
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/pkg/wire"
)

// screenshotQuality is the JPEG quality of screenshots: legible text at a fraction of PNG's size.
const screenshotQuality = 70

// screenshot captures the tab's viewport as a JPEG of at most wire.MaxScreenshotBytes, or nil
// when it cannot (the page crashed, no time is left). It gets a moment of its own: it is taken
// when a check has failed, sometimes because its deadline passed.
func screenshot(tab context.Context) []byte {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tab), 3*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatJpeg, Quality: ptr(int64(screenshotQuality)), OptimizeForSpeed: ptr(true),
	})
	if err != nil {
		return nil
	}
	return Shrink(res.Data)
}

// Shrink returns img (a PNG or JPEG) when it fits in wire.MaxScreenshotBytes, or a JPEG of it
// re-encoded at a lower quality, then at half the size, until it fits; nil when nothing fits
// or img is not an image.
func Shrink(img []byte) []byte {
	if len(img) <= wire.MaxScreenshotBytes && wire.ScreenshotType(img) != "" {
		return img
	}
	m, _, err := image.Decode(bytes.NewReader(img))
	if err != nil {
		return nil
	}
	for range 4 {
		for _, q := range []int{screenshotQuality, 40} {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
				return nil
			}
			if buf.Len() <= wire.MaxScreenshotBytes {
				return buf.Bytes()
			}
		}
		m = half(m)
	}
	return nil
}

// half scales m to half its width and height (nearest neighbour: legible enough for a
// screenshot that did not fit).
func half(m image.Image) image.Image {
	b := m.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, max(b.Dx()/2, 1), max(b.Dy()/2, 1)))
	for y := range out.Bounds().Dy() {
		for x := range out.Bounds().Dx() {
			out.Set(x, y, m.At(b.Min.X+2*x, b.Min.Y+2*y))
		}
	}
	return out
}
